// Run by test/profile/memory-bound.test.ts in a process of its own (`node --expose-gc <npm start's flags>`):
// fills the memory store to the bound given as argument with distinct clients' profiles, and prints the RSS
// after GC before and after. The baseline comes after the same writes through a tiny store, so the allocator and
// the young generation have grown as under any load and the growth measured is what the full store holds.
import { randomUUID } from 'node:crypto'
import { profileExample } from '../../schemas/profile.ts'
import { memoryStore } from '../../src/profile/last-known/memory-store.ts'
import { NO_OBSERVER } from '../../src/profile/last-known/observer.ts'

const bound = Number(process.argv[2])
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined || !(bound > 0)) throw new Error('usage: node --expose-gc fill-memory-store.ts <bytes>')
const uuid = /[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/g
const { catalog_cars_view: viewed, catalog_cars_favourites: favourites } = profileExample

// Each shape of profile once, cut at its ids: from none to all of the documented cars.
const shapes = new Map<string, string[]>()
function shapeOf (views: number, kept: number): string[] {
  const profile = {
    ...profileExample, catalog_cars_view: viewed.slice(0, views), catalog_cars_favourites: favourites.slice(0, kept)
  }
  const key = `${views}/${kept}`
  if (!shapes.has(key)) shapes.set(key, JSON.stringify(profile).split(uuid))
  return shapes.get(key)!
}

/** A copy as the flow writes it: every id its own. */
function copyOf (i: number): Buffer[] {
  const parts = shapeOf(i % (viewed.length + 1), (i >> 2) % (favourites.length + 1))
  let body = parts[0]!
  for (let p = 1; p < parts.length; p++) body += randomUUID().toUpperCase() + parts[p]!
  const at = Date.now()
  return [Buffer.from(JSON.stringify({ passport: at, discount: at, contractor: at }) + '\n'), Buffer.from(body)]
}
const nameOf = (i: number) => i.toString(16).padStart(64, '0')
function rss (): number {
  gc!()
  gc!()
  return process.memoryUsage().rss
}

let written = 0
const warm = memoryStore(64 * 1024, NO_OBSERVER)
for (; written < 10_000; written++) warm.write(nameOf(written), copyOf(written))
warm.clear()
const baseline = rss()

const pushedOut = { count: 0 }
const store = memoryStore(bound, { ...NO_OBSERVER, evicted () { pushedOut.count++ } })
let entries = 0
// Full: a thousand copies pushed out by the bound.
while (pushedOut.count < 1000) store.write(nameOf(written++), copyOf(entries++))
const full = rss()
const held = entries - pushedOut.count
process.stdout.write(JSON.stringify({ bound, baseline, full, held, size: store.size }) + '\n')
