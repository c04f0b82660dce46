import neostandard from 'neostandard'
import importX from 'eslint-plugin-import-x'

// The layers inside src/ (docs/architecture.md): the files directly in src/ but the top three are shared leaves, and
// so are the configuration's areas (src/config/) that config.ts composes.
const TOP = ['./src/app.ts', './src/server.ts', './src/compile-cache.ts']
const SHARED_LEAVES = ['./src/!(app|server|compile-cache).ts', './src/config/*.ts']
// Every folder of src/, the contract first as it is the only one inside another that the zones tell apart.
const FOLDERS = ['./src/upstream/contract', './src/tracing', './src/auth', './src/upstream', './src/profile',
  './src/metrics', './src/plugins', './src/routes']
const without = (list, item) => list.filter(entry => entry !== item)

export default [
  ...neostandard({ ts: true, ignores: ['node_modules/**', '.tap/**', 'coverage/**', 'test-output/**', 'scratch/**'] }),
  {
    plugins: { 'import-x': importX },
    settings: { 'import-x/extensions': ['.ts', '.js'] },
    rules: {
      // TypeBox names a schema and its Static<> type alike; tsc already rejects real redeclarations.
      '@typescript-eslint/no-redeclare': 'off',
      // Layers point one way (docs/architecture.md); a cycle is a layer pointing back.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // The layers of docs/architecture.md, one zone each: production code (src/, the image) never reaches dev-only
      // code, the schemas stay below the app, the bench stands apart from the tests, and inside src/ no layer
      // imports one above it.
      'import-x/no-restricted-paths': ['error', {
        basePath: import.meta.dirname,
        zones: [
          {
            target: './src',
            from: ['./sandbox', './test', './bench', './scripts'],
            message: 'src/ is what the image ships: dev-only code stays out of it.'
          },
          {
            target: './schemas',
            from: './src',
            message: 'The schemas are the source of truth: src/ builds on them.'
          },
          { target: './bench', from: './test', message: 'Shared dev helpers live in sandbox/ or scripts/.' },
          {
            target: SHARED_LEAVES,
            from: [...FOLDERS, ...TOP],
            message: 'A shared leaf of src/ imports only schemas/ and the other leaves.'
          },
          {
            target: './src/tracing',
            from: without(FOLDERS, './src/tracing').concat(TOP),
            message: 'Tracing is told what it needs by app.ts.'
          },
          {
            target: './src/auth',
            from: without(FOLDERS, './src/auth').concat(TOP),
            message: 'The key checks and the key set know nothing of the app that uses them.'
          },
          {
            target: './src/upstream/contract',
            from: without(FOLDERS, './src/upstream/contract').concat(TOP),
            except: ['./contract'],
            message: 'The contract checks answers against the schemas and needs nothing of the call around it.'
          },
          {
            target: './src/upstream/transport',
            from: without(FOLDERS, './src/upstream/contract').concat(TOP),
            except: ['./transport', './contract'],
            message: 'The transport is below the client: the wire and the contract only.'
          },
          {
            target: './src/upstream',
            from: ['./src/auth', './src/profile', './src/metrics', './src/plugins', './src/routes', ...TOP],
            message: 'The upstream client knows nothing of the app above it.'
          },
          {
            target: './src/profile',
            from: ['./src/metrics', './src/plugins', './src/routes', ...TOP],
            message: 'The profile flow is below the plugins that hold it and the routes that call it.'
          },
          {
            target: './src/metrics',
            from: without(FOLDERS, './src/metrics').concat(TOP),
            message: 'The owners\' metrics need only prom-client and the shared leaves.'
          },
          {
            target: './src/plugins',
            from: ['./src/routes', ...TOP],
            message: 'Routes use the plugins, never the reverse.'
          },
          {
            target: './src/routes',
            from: TOP,
            message: 'app.ts, server.ts and compile-cache.ts are the top of src/: nothing imports them back.'
          }
        ]
      }]
    }
  },
  // A plugin is a file of plugins/app/ or plugins/external/, or the index.ts of a folder there, which also holds the
  // modules of its feature (docs/architecture.md). A route or a plugin reaches another plugin's decorators through
  // `fastify` and may import a feature's modules, but no value from a plugin itself; types pass (they are erased).
  {
    files: ['src/routes/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          regex: '(^|/)plugins/(app|external)/[^/]+(/index)?\\.ts$',
          allowTypeImports: true,
          message: 'A route imports no value from a plugin: decorators come through fastify, helpers from the ' +
            'modules beside it.'
        }]
      }]
    }
  },
  {
    files: ['src/plugins/*/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          // ./x.ts, ../external/x.ts: another plugin file; .../index.ts: a plugin folder's plugin.
          regex: '^\\./[^/]+\\.ts$|^\\.\\./[^./][^/]*/[^/]+\\.ts$|(^|/)index\\.ts$',
          allowTypeImports: true,
          message: 'A plugin imports no value from another plugin: app.ts registers both, and what they share ' +
            'is a module beside one of them or outside plugins/.'
        }]
      }]
    }
  },
  {
    files: ['src/plugins/*/*/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          // ../x.ts, ../../external/x.ts: a plugin file; .../index.ts: a plugin folder's plugin (its own too).
          regex: '^\\.\\./[^/]+\\.ts$|^\\.\\./\\.\\./[^./][^/]*/[^/]+\\.ts$|(^|/)index\\.ts$',
          allowTypeImports: true,
          message: 'A plugin imports no value from another plugin: app.ts registers both, and what they share ' +
            'is a module beside one of them or outside plugins/.'
        }]
      }]
    }
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // Fastify's and HTTP's words (reply, response, route, caller): the old private vocabulary does not come back.
      // ConsoleAnswer stays: the schemas' names follow the OpenAPI components, and the document does not change.
      'id-match': ['error', '^(?!ConsoleAnswer$)(?!.*(?:[Aa]nswer|[Ff]ront(?!end)|[Rr]educed?(?![a-z])|[Ss]tandIn))' +
        '(?!(?:keep|who)$).*$|^ConsoleAnswer$', { onlyDeclarations: true, properties: false }]
    }
  },
  {
    rules: {
      // Strings and template literals count too: only URLs and regular expression literals may pass 120 columns.
      '@stylistic/max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }]
    }
  }
]
