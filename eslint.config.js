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
            message: 'The schemas are the source of truth: src/ builds on them.'
          },
          { target: './bench', from: './test', message: 'Shared dev helpers live in sandbox/ or scripts/.' },
          {
            target: './src/upstream',
            from: ['./src/plugins', './src/routes', './src/profile', './src/auth'],
            message: 'The upstream client knows nothing of the app above it.'
          },
          {
            target: './src/tracing',
            from: ['./src/plugins', './src/routes', './src/profile', './src/upstream'],
            message: 'Tracing is told what it needs by app.ts.'
          },
          { target: './src/profile', from: './src/routes', message: 'Routes call the profile flow, never the reverse.' },
          { target: './src/plugins', from: './src/routes', message: 'Routes use the plugins, never the reverse.' }
        ]
      }]
    }
  },
  {
    rules: {
      '@stylistic/max-len': ['error', {
        code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true
      }]
    }
  }
]
