// The mdq command line as a user meets it: --version, usage errors as one line on stderr, help that
// shows the import columns and the serve defaults.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { repoRoot } from '../helpers/shared-data.js'
import { runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)
const db = join(dir, 'usage.db')
const mdq = (...args: string[]) => runMdq(['--db', db, ...args])

describe('mdq usage', () => {
  it('--version prints the version of package.json', () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string }
    const r = mdq('--version')
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.stdout, `${version}\n`)
  })

  it('a usage error is one line on stderr naming the help, exit 1, not the whole usage', () => {
    for (const [args, line] of [
      [['import', 'bars'], "mdq: missing required argument 'file' (see mdq import --help)"],
      [
        ['import', 'bars', 'x.csv', '--period', '2d'],
        "mdq: option '--period <period>' argument '2d' is invalid. Allowed choices are 1m, 1d. (see mdq import --help)",
      ],
      [['frob'], "mdq: unknown command 'frob' (see mdq --help)"],
      [['keys', 'create'], "mdq: required option '--name <name>' not specified (see mdq keys create --help)"],
      [['serve', '--port', 'x'], /^mdq: option '--port <n>' argument 'x' is invalid\. .* \(see mdq serve --help\)$/],
    ] as const) {
      const r = mdq(...args)
      assert.equal(r.status, 1, args.join(' '))
      assert.equal(r.stdout, '')
      if (typeof line === 'string') assert.equal(r.stderr, `${line}\n`)
      else assert.match(r.stderr.trimEnd(), line)
      assert.equal(r.stderr.split('\n').length, 2, r.stderr)
    }
  })

  it('import --help shows the columns of every kind', () => {
    const r = mdq('import', '--help')
    assert.equal(r.status, 0)
    for (const line of [
      '  instruments  symbol[,name][,type][,listing_date][,tick_size][,total_shares][,float_shares][,limit_up][,limit_down][,name_en][,lot_size]',
      '  bars         symbol,time,open,high,low,close,volume[,amount][,prev_close]',
      '  ex-factors   symbol,ex_date,ex_factor',
      '  actions      symbol,ex_date[,cash_dividend][,bonus_ratio][,rights_ratio][,rights_price][,split_ratio]',
      '  universes    universe_id,symbol[,name][,region][,category][,description][,in_date][,out_date]',
      "A vendor's own file, as it comes (units converted): --format tushare (bars, ex-factors from adj_factor, financials income, balance-sheet, cash-flow), baostock (daily bars), lean (bars and factor files, zipped or not)",
    ])
      assert.ok(r.stdout.includes(`${line}\n`), line)
  })

  it('serve --help shows the default rate limit as a rate', () => {
    const r = mdq('serve', '--help')
    assert.equal(r.status, 0)
    assert.match(r.stdout.replace(/\s+/g, ' '), /--rate-limit <rate> .*\(default: 600\/min, env: MDQ_RATE_LIMIT\)/)
  })

  it('keys list prints a header over its tab-separated columns', () => {
    assert.equal(mdq('migrate').status, 0)
    const empty = mdq('keys', 'list')
    assert.equal(empty.status, 0, empty.stderr)
    assert.equal(empty.stdout, 'id\tname\tscope\tstatus\tquota\tcreated\n')
    assert.equal(empty.stderr, 'no keys yet: create one with mdq keys create --name NAME\n')
    assert.equal(mdq('keys', 'create', '--name', 'me', '--rate', '1200/min').status, 0)
    const lines = mdq('keys', 'list').stdout.split('\n')
    assert.equal(lines[0], 'id\tname\tscope\tstatus\tquota\tcreated')
    assert.match(lines[1], /^1\tme\tread\tactive\t1200\/min burst default\t\d{4}-\d\d-\d\dT[\d:.]+Z$/)
    // A burst of its own without a rate of its own shows too.
    assert.equal(mdq('keys', 'create', '--name', 'bursty', '--burst', '3').status, 0)
    assert.match(mdq('keys', 'list').stdout.split('\n')[2], /^2\tbursty\tread\tactive\tdefault rate burst 3\t/)
    // A name is one line of text.
    for (const bad of ['', 'a\tb', 'a\nb']) {
      const r = mdq('keys', 'create', '--name', bad)
      assert.equal(r.status, 1, JSON.stringify(bad))
      assert.match(r.stderr, /--name/)
    }
  })
})
