// The one redaction module's two entries (src/redaction.ts): the cheap one a failure's texts and log lines pass
// through, and the thorough one of the console. What each catches, and what the cheap one leaves to the other.
import t from 'tap'
import { secretRedactor, textRedactor } from '../src/redaction.ts'

const KEY = '6B0D7E1A-3F2C-4C2F-9A8E-5F3B2D1C0A9E'
const LOGIN = '+79161234567'

t.test('the cheap entry replaces each secret as it is, and a text holding one percent-encoded whole', async t => {
  const redact = textRedactor([KEY, LOGIN, ''])
  t.equal(redact(`https://up.example/x?key=${KEY}&login=${LOGIN}`),
    'https://up.example/x?key=[redacted]&login=[redacted]')
  t.equal(redact(`/x?login=${encodeURIComponent(LOGIN)}`), '[redacted]', 'percent-encoded: the whole text')
  t.equal(redact('/bc_passport/get_client/ 100% + fine'), '/bc_passport/get_client/ 100% + fine',
    'a text with % or + but no secret stays as it is')
  t.equal(redact(''), '', 'an empty secret matches nothing')
})

t.test('the thorough entry also finds encoded, case-folded and split echoes, in any string of a value', async t => {
  const redactor = secretRedactor([KEY])
  const base64 = Buffer.from(KEY).toString('base64')
  t.equal(textRedactor([KEY])(base64), base64, 'the cheap entry does not look inside base64')
  t.equal(redactor.text(base64), '[redacted]')
  t.equal(redactor.text(KEY.toLowerCase()), '[redacted]')
  t.strictSame(redactor.value({ [KEY]: [KEY.slice(0, 18), KEY.slice(18)], fine: 'ok' }),
    { '[redacted]': ['[redacted]', '[redacted]'], fine: 'ok' })
})
