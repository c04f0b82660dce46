// The kinds of value several areas' variables share, so a duration or a key reads the same everywhere.
import { Type } from 'typebox'

export const Millis = (fallback: number, description: string) =>
  Type.Integer({ minimum: 1, maximum: 600_000, default: fallback, description })
export const PerMinute = (fallback: number, description: string) =>
  Type.Integer({ minimum: 1, maximum: 1_000_000, default: fallback, description })
export const Secret = (description: string) => Type.String({ minLength: 1, description })
