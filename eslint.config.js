import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['node_modules/**', '.tap/**', 'coverage/**', 'test-output/**', 'scratch/**'] }),
  {
    rules: {
      // TypeBox names a schema and its Static<> type alike; tsc already rejects real redeclarations.
      '@typescript-eslint/no-redeclare': 'off'
    }
  }
]
