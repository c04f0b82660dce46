import neostandard from 'neostandard'
import importX from 'eslint-plugin-import-x'

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
      // What each folder may import: production code (src/, the image) never reaches dev-only code, the
      // schemas stay below the app, and the bench stands apart from the tests.
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
            // The operation registry is schema data (paths and the schemas of each call); it belongs in schemas/.
            except: ['./upstream/operations.ts'],
            message: 'The schemas are the source of truth: src/ builds on them.'
          },
          { target: './bench', from: './test', message: 'Shared dev helpers live in sandbox/ or scripts/.' }
        ]
      }]
    }
  },
  {
    // Until the last-known profile lands: another branch is rewriting the files in `ignores`.
    ignores: [
      'src/profile/*.ts', 'src/config.ts', 'src/plugins/app/metrics.ts', 'src/plugins/app/redis.ts',
      'src/routes/profile*.ts', 'src/upstream/client.ts', 'schemas/profile.ts', 'test/routes/profile*.test.ts',
      'test/plugins/metrics.test.ts', 'test/config.test.ts', 'test/helpers/real-servers.ts',
      'test/helpers/fault-upstream.ts', 'sandbox/faults.ts'
    ],
    rules: {
      '@stylistic/max-len': ['error', {
        code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true
      }]
    }
  }
]
