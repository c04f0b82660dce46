// The request console's contracts (docs/api.md). The request is generated from the operation
// registry, one variant per operation, so the registry stays the console's allowlist: adding an
// operation adds a variant, its example and its documentation.
import { Type, type Static, type TLiteral, type TObject, type TSchema } from 'typebox'
import { operations, operationNames, type OperationName, type Operations } from './operations.ts'
import * as example from './fixtures.ts'

/** The first documented example of a schema, for the generated request examples. */
function firstExample (schema: TSchema): unknown {
  const examples = (schema as { examples?: unknown[] }).examples
  return examples?.[0]
}

type VariantOf<N extends OperationName> = TObject<{ operation: TLiteral<N>, params: Operations[N]['params'] }>
type Variant = { [N in OperationName]: VariantOf<N> }[OperationName]

function variantOf<N extends OperationName> (name: N): VariantOf<N> {
  return Type.Object({
    operation: Type.Literal(name, { description: operations[name].summary }),
    params: operations[name].params
  }, {
    title: name,
    additionalProperties: false
  }) as VariantOf<N>
}

/** One variant per registry operation, in registry order. */
export const consoleRequestVariants: Variant[] = operationNames.map(name => variantOf(name) as Variant)

// Unsafe only carries the static type: TypeBox cannot infer a union from a list built at run time.
export const ConsoleRequest = Type.Unsafe<Static<Variant>>(Type.Union(consoleRequestVariants, {
  $id: 'ConsoleRequest',
  description: 'One upstream operation of the registry and its params; no other property is accepted.',
  examples: operationNames.map(name => ({ operation: name, params: firstExample(operations[name].params) }))
}))

const ConsoleRedirect = Type.Object({
  status: Type.Integer({ description: 'The 307/308 status the upstream answered.', examples: [307] }),
  location: Type.String({
    description: 'The Location it named, as received.', examples: ['/bc_api_web_service/discount/']
  })
}, { additionalProperties: false })

const ConsoleContractError = Type.Object({
  path: Type.String({
    description: 'JSON pointer into `body`; `/` for the whole answer.', examples: ['/data/contacts/0/id']
  }),
  message: Type.String({ examples: ['must match format "uuid"'] })
}, {
  additionalProperties: false,
  // Named, so the generated Swift (npm run models) has no `struct Error` shadowing Swift.Error.
  title: 'ContractViolation'
})

const discountAnswer = {
  operation: 'dealer.discount',
  status: 200,
  redirects: [{ status: 307, location: '/bc_api_web_service/discount/' }],
  duration_ms: 42.17,
  contract: { valid: true, errors: [] },
  body: example.discountWithBonuses
}

const notFoundAnswer = {
  operation: 'passport.get_client',
  status: 400,
  redirects: [{ status: 307, location: '/bc_passport/get_client/' }],
  duration_ms: 38.5,
  contract: { valid: true, errors: [] },
  body: example.passportNotFound
}

const brokenAnswer = {
  operation: 'dealer.client',
  status: 500,
  redirects: [],
  duration_ms: 12.03,
  contract: { valid: false, errors: [{ path: '/', message: 'HTTP 500 is not an answer of dealer.client' }] },
  body: '<html><body>Internal Server Error</body></html>'
}

export const ConsoleAnswer = Type.Object({
  operation: Type.Enum(operationNames, { description: 'The operation that ran.' }),
  status: Type.Integer({ description: 'The final upstream HTTP status; an error status is data here.' }),
  redirects: Type.Array(ConsoleRedirect, { description: 'Every redirect the upstream answered, in order.' }),
  duration_ms: Type.Number({ minimum: 0, description: 'The whole exchange, redirects included.' }),
  contract: Type.Object({
    valid: Type.Boolean({ description: "Whether the answer is one the operation's contract allows." }),
    errors: Type.Array(ConsoleContractError, { description: 'What breaks the contract; empty when valid.' })
  }, { additionalProperties: false }),
  body: Type.Unknown({
    description: 'The upstream answer as received: parsed JSON when it is JSON, text otherwise. Any configured key ' +
      'in it is redacted.'
  })
}, {
  $id: 'ConsoleAnswer',
  additionalProperties: false,
  description: 'One upstream exchange as it happened.',
  examples: [discountAnswer, notFoundAnswer, brokenAnswer]
})

export type ConsoleRequest = Static<typeof ConsoleRequest>
export type ConsoleAnswer = Static<typeof ConsoleAnswer>
