// Which inbound headers may travel upstream: the six tracing headers, and only bounded values of them.
import t from 'tap'
import { createUpstreamClient } from '../../src/upstream/client.ts'
import { pickTracingHeaders, TRACING_HEADERS } from '../../src/upstream/transport/tracing-headers.ts'

t.test('picks the tracing headers and nothing else', async t => {
  const picked = pickTracingHeaders({
    authorization: 'Bearer token',
    cookie: 'session=1',
    'x-authorization': 'key',
    host: 'bff.example.ru',
    baggage: 'b=1',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'rojo=1',
    'sentry-trace': '4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1',
    'x-trace-id': 'trace-1',
    'x-request-id': 'req-1'
  })

  t.strictSame(Object.keys(picked).sort(), [...TRACING_HEADERS].sort())
  t.equal(picked.traceparent, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
})

t.test('a repeated header is joined as one list, as HTTP allows', async t => {
  t.strictSame(pickTracingHeaders({ baggage: ['a=1', 'b=2'] }), { baggage: 'a=1,b=2' })
})

t.test('an oversized value is dropped, not sent upstream', async t => {
  t.strictSame(pickTracingHeaders({ baggage: 'a'.repeat(8193), 'x-request-id': 'req-1' }), { 'x-request-id': 'req-1' })
})

t.test('no tracing headers, nothing picked', async t => {
  t.strictSame(pickTracingHeaders({}), {})
})

t.test('the client forwards, of an inbound request, its well-formed tracing headers and its own id', async t => {
  const client = createUpstreamClient({
    baseUrl: 'https://upstream.example', keys: { passport: 'passport-key', dealer: 'dealer-key' }, timeoutMs: 1000
  })
  t.teardown(() => client.close())
  const inbound = {
    authorization: 'Bearer token',
    cookie: 'session=1',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'rojo=1',
    baggage: 'a'.repeat(8193),
    'x-request-id': 'inbound-id'
  }
  t.strictSame(client.forwardedHeaders(inbound, 'req-7'), {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: 'rojo=1',
    'x-request-id': 'req-7'
  }, 'no credential, no oversized baggage; the request id is the service\'s')
})
