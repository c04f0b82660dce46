// `npm start` runs this first (the prestart script) with the machine's own node. On a Node other than the one
// package.json's engines names, it stops with one line saying which Node is needed, where Node 20 would fail to
// load src/server.ts with ERR_UNKNOWN_FILE_EXTENSION. CommonJS of old syntax, so that any Node can read it.
'use strict'

const engines = require('../package.json').engines
const range = /^>=(\d+) <(\d+)$/.exec(engines.node)
if (range === null) {
  process.stderr.write('package.json: engines.node must read ">=<major> <major>", not "' + engines.node + '"\n')
  process.exit(1)
}
const lowest = Number(range[1])
const below = Number(range[2])
const major = Number(process.versions.node.split('.')[0])
if (major < lowest || major >= below) {
  const wanted = below === lowest + 1 ? 'Node.js ' + lowest : 'Node.js ' + engines.node
  process.stderr.write('dealer-profile-bff needs ' + wanted + ', but this is Node.js ' + process.versions.node +
    ' (' + process.execPath + '): install ' + wanted + ' (see docs/operations.md#deploying) and run npm start again\n')
  process.exit(1)
}
