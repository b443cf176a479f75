#!/usr/bin/env node
// The mdq command line (compiled by `npm ci`/`npm run build` into dist/).
import '../dist/src/cli/main.js'
