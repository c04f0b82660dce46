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
      'import-x/no-cycle': ['error', { ignoreExternal: true }]
    }
  }
]
