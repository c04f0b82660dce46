// Who is calling: what a verified token names, and all the profile flow and the last-known store key on.
// Below the plugins, so the domain code that needs it never imports the auth plugin.
import type { PassportParams } from '../../schemas/passport.ts'

/** Who is calling: exactly what the passport lookup needs, `uid_client` upper-cased as the upstream writes it. */
export type Caller = Readonly<PassportParams>
