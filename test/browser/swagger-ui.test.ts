// Swagger UI as a person uses it: in a real Chromium, against `npm run dev` started in-process, the
// Authorize dialog takes a printed dev token and the console key, and "Try it out" on the profile shows
// a 200 with the client's login. A screenshot of the answer is kept in test-output/ (git-ignored).
// Needs Debian's Chromium (`apt-get install chromium`; .ci/run installs it): in CI a missing browser
// fails the test, elsewhere it is skipped with a message.
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { chromium } from 'playwright-core'
import { IVANOV } from '../../schemas/fixtures.ts'
import { startDev } from '../../sandbox/dev.ts'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const IN_CI = (process.env.CI ?? '') !== '' && process.env.CI !== 'false'
const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/', import.meta.url))
const SCREENSHOT = `${OUTPUT_DIR}swagger-ui-profile.png`
const STEP_TIMEOUT_MS = 15_000

// No first-run work, no network of its own: the browser only talks to the service under test.
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'
]

const missing = `Chromium not found at ${CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM_PATH`

const NAME = 'Swagger UI: authorize with a dev token, try the profile, see the client'

async function tryProfileInSwaggerUi (t: Test): Promise<void> {
  const run = await startDev({ port: 0, logLevel: 'warn', log: { write: () => {} } })
  t.teardown(() => run.close())
  const ivanov = run.clients.find(c => c.label === 'IVANOV')!

  // Playwright gives the browser a fresh temporary profile (--user-data-dir) and removes it on close.
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.setDefaultTimeout(STEP_TIMEOUT_MS)
  const pageErrors: string[] = []
  page.on('pageerror', error => pageErrors.push(error.message))

  await page.goto(run.docsUrl)

  // The Authorize dialog offers both schemes: the bearer token and the console key.
  await page.locator('.scheme-container button.authorize').click()
  const dialog = page.locator('.modal-ux')
  const bearer = dialog.locator('.auth-container', { has: page.locator('code', { hasText: 'bearerAuth' }) })
  const consoleKey = dialog.locator('.auth-container', { has: page.locator('code', { hasText: 'consoleKey' }) })
  await bearer.locator('input').fill(ivanov.token)
  await bearer.locator('button[type=submit]').click()
  await consoleKey.locator('input').fill(run.consoleKey)
  await consoleKey.locator('button[type=submit]').click()
  // Once applied, each form offers Logout instead of Authorize.
  await bearer.locator('button', { hasText: 'Logout' }).waitFor()
  await consoleKey.locator('button', { hasText: 'Logout' }).waitFor()
  await dialog.locator('button.close-modal').click()
  await dialog.waitFor({ state: 'detached' })

  const operation = page.locator('.opblock.opblock-get',
    { has: page.locator('.opblock-summary-path[data-path="/api/users/profile"]') })
  await operation.locator('.opblock-summary').click()
  await operation.locator('button.try-out__btn').click()
  await operation.locator('button.execute').click()

  const answer = operation.locator('.live-responses-table .response').first()
  await answer.locator('.response-col_status', { hasText: '200' }).waitFor()
  const body = answer.locator('.response-col_description .highlight-code')
  await body.getByText(IVANOV.login).first().waitFor()

  t.equal((await answer.locator('.response-col_status').innerText()).trim(), '200', 'Swagger UI shows a 200')
  t.match(await body.innerText(), `"uid_client": "${IVANOV.uid_client}"`, 'and the profile of the authorized client')
  t.match(await operation.locator('.curl-command').innerText(), 'Authorization: Bearer',
    'the request carried the bearer token')
  t.strictSame(pageErrors, [], 'no script errors on the page')

  // From the operation's title down to the end of the live answer; the documented responses below are left out.
  const top = await operation.boundingBox()
  const bottom = await operation.locator('.live-responses-table').boundingBox()
  await mkdir(OUTPUT_DIR, { recursive: true })
  if (top === null || bottom === null) t.fail('the operation and its answer are on screen')
  else {
    const clip = { x: top.x, y: top.y, width: top.width, height: bottom.y + bottom.height - top.y }
    await page.screenshot({ path: SCREENSHOT, fullPage: true, clip })
  }
  t.ok(existsSync(SCREENSHOT), `screenshot saved to ${SCREENSHOT}`)
}

if (existsSync(CHROMIUM)) t.test(NAME, tryProfileInSwaggerUi)
else if (IN_CI) t.fail(`${missing}. CI must run the browser test; .ci/run installs chromium with apt-get.`)
else t.test(NAME, { skip: missing }, tryProfileInSwaggerUi)
