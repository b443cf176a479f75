// Files the importer must refuse, through the real CLI on a real store file: one line on stderr naming
// file, line and column, exit 1, and the store exactly as it was.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { dumpStore, runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)
const db = join(dir, 'refusals.db')
let files = 0

/** Imports `content` as `kind` and asserts the refusal: exit 1, one stderr line matching `message`, nothing stored. */
function refused(kind: string, content: string, message: RegExp, ...args: string[]): string {
  const file = join(dir, `f${++files}.csv`)
  writeFileSync(file, content)
  const before = dumpStore(db)
  const r = runMdq(['--db', db, 'import', kind, file, ...args])
  assert.equal(r.status, 1, `exit status; stdout: ${r.stdout}`)
  assert.equal(r.stdout, '')
  assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr)
  assert.ok(r.stderr.startsWith(`mdq: ${file}:`), r.stderr)
  assert.match(r.stderr, message)
  assert.equal(dumpStore(db), before, 'the store is unchanged')
  return r.stderr
}

function imported(kind: string, content: string): string {
  const file = join(dir, `seed${++files}.csv`)
  writeFileSync(file, content)
  const r = runMdq(['--db', db, 'import', kind, file])
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}

before(() => {
  imported(
    'bars',
    'symbol,time,open,high,low,close,volume\n600000.SH,2024-01-02,10,11,9,10,100\n' +
      'AAPL.US,2020-08-28,499,505,495,499.23,100\nAAPL.US,2020-08-31,127,131,126,129.04,400\n',
  )
  imported('ex-factors', 'symbol,ex_date,ex_factor\nAAPL.US,2020-08-31,4.0\n')
})

describe('files and stores that are not what they should be', () => {
  it('a directory, or no such file, is one line naming it (no position), and nothing is stored', () => {
    const before = dumpStore(db)
    for (const [path, reason] of [
      [dir, 'a directory, not a CSV file'],
      [join(dir, 'nope.csv'), 'file not found or not readable'],
    ]) {
      const r = runMdq(['--db', db, 'import', 'bars', path])
      assert.equal(r.status, 1)
      assert.equal(r.stderr, `mdq: ${path}: ${reason}\n`)
    }
    assert.equal(dumpStore(db), before)
  })

  it('a bars option that would be ignored is refused: --symbol beside a symbol column, bar options for other kinds', () => {
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume\n600000.SH,2024-01-03,10,11,9,10,100\n',
      /:1:1: the file has a symbol column and --symbol 600519\.SH was given: --symbol is for files without one$/m,
      '--symbol',
      '600519.SH',
    )
    const file = join(dir, 'ef-flags.csv')
    writeFileSync(file, 'symbol,ex_date,ex_factor\nAAPL.US,2020-08-31,4.0\n')
    const before = dumpStore(db)
    const r = runMdq(['--db', db, 'import', 'ex-factors', file, '--symbol', 'AAPL.US', '--period', '1m'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^mdq: .*--period, --symbol apply to bars only, not to ex-factors/)
    assert.equal(dumpStore(db), before)
  })

  it('a store that is not an SQLite file, or is a directory, is one line naming it', () => {
    const junk = join(dir, 'junk.db')
    writeFileSync(junk, 'not a database\n')
    for (const [store, reason] of [
      [junk, 'not an SQLite store file'],
      [dir, 'cannot be opened (a directory, or no permission?)'],
    ]) {
      const r = runMdq(['--db', store, 'migrate'])
      assert.equal(r.status, 1)
      assert.equal(r.stderr, `mdq: ${store}: ${reason}\n`)
    }
  })
})

describe('line ends, header names and epoch digits', () => {
  it('refuses a CR-only (old Mac) file at line 1 instead of reading it as one header line', () => {
    refused(
      'instruments',
      'symbol,name\r600519.SH,贵州茅台\r000001.SZ,平安银行\r',
      /:1:2: a carriage return \(CR\) that is not followed by a line feed: the file has CR-only \(old Mac\) line ends; convert them to LF or CRLF\n$/,
    )
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume\r600000.SH,2024-01-03,10,11,9,10,100\r',
      /:1:7: a carriage return \(CR\)/,
    )
  })

  it('refuses a carriage return inside a row, naming its line and column', () => {
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume\r\n600000.SH,2024-01-03,10,11,9,10,100\r\n600000.SH,2024-01-04,10\r11,9,10,100\r\n',
      /:3:3: a carriage return \(CR\)/,
    )
  })

  it('refuses a header naming a column twice, naming both columns', () => {
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume,close\n600000.SH,2024-01-03,10,11,9,10,100,10\n',
      /:1:8: column 'close' is named twice \(columns 6 and 8\)/,
    )
  })

  it('refuses epoch milliseconds written with a leading zero', () => {
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume\n600000.SH,01704240000000,10,11,9,10,100\n',
      /:2:2: time '01704240000000' has a leading zero: epoch milliseconds are written without one/,
    )
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume\n600000.SH,017042400000,10,11,9,10,100\n',
      /:2:2: time '017042400000' has a leading zero/,
    )
  })
})

describe('a header that does not fit the kind', () => {
  it('refuses an ex-factors file imported as actions, naming the unknown and the missing columns; the split stays', () => {
    const err = refused(
      'actions',
      'symbol,ex_date,ex_factor\nAAPL.US,2020-08-31,4.0\n',
      /:1:3: the header does not fit an? actions file: .*'ex_factor'.*cash_dividend, bonus_ratio, rights_ratio, rights_price, split_ratio/,
    )
    assert.doesNotMatch(err, /imported/)
  })

  it('refuses a column the kind does not know, and names every problem of the header at once', () => {
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume,turnover\n600000.SH,2024-01-03,10,11,9,10,100,5\n',
      /:1:8: the header does not fit a bars file: unknown column 'turnover'/,
    )
    const err = refused(
      'instruments',
      'symbol,name,sector,,listing\n600519.SH,贵州茅台,liquor,,2001-08-27\n',
      /:1:3: the header does not fit an? instruments file: /,
    )
    assert.match(err, /unknown columns 'sector', 'listing'; column 4 without a name/)
    const missing = refused('ex-factors', 'symbol,ex_factor\nAAPL.US,4.0\n', /missing column 'ex_date'/)
    assert.match(missing, /ex-factors columns: symbol,ex_date,ex_factor/)
    refused(
      'bars',
      'time,open,high,low,close,volume\n2024-01-03,10,11,9,10,100\n',
      /missing column 'symbol' \(or give --symbol\)/,
    )
  })

  it('refuses an actions row that gives no action', () => {
    refused(
      'actions',
      'symbol,ex_date,cash_dividend,split_ratio\nAAPL.US,2020-08-31,,\n',
      /:2:2: this row gives no action: fill at least one of cash_dividend/,
    )
  })

  it('imports an actions file with only some of the action columns', () => {
    assert.match(imported('actions', 'symbol,ex_date,split_ratio\nAAPL.US,2020-08-31,4\n'), /imported actions: 1 rows/)
  })
})

describe('hints for the names and separators of other tools', () => {
  const bars = '(bars columns: symbol,time,open,high,low,close,volume[,amount][,prev_close])'
  it("refuses Tushare's daily header with every rename at once, instead of one missing column at a time", () => {
    const err = refused(
      'bars',
      'ts_code,trade_date,open,high,low,close,pre_close,change,pct_chg,vol,amount\n' +
        '600000.SH,20240103,10,11,9,10,10,0,0,100,1000\n',
      /:1:1: the header does not fit a bars file: /,
    )
    assert.ok(
      err.includes(
        "rename 'ts_code' to 'symbol' (Tushare), 'trade_date' to 'time' (Tushare), 'pre_close' to 'prev_close' (Tushare), 'vol' to 'volume' (Tushare; its vol is in lots of 100 shares and its amount in thousands of yuan); drop 'change' (Tushare; close - pre_close, which mdq derives), 'pct_chg' (a change in percent, which mdq derives) " +
          bars,
      ),
      err,
    )
  })

  it('refuses a pre_close column instead of dropping it, with the rename', () => {
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume,pre_close\n600000.SH,2024-01-03,10,11,9,10,100,10\n',
      /:1:8: the header does not fit a bars file: rename 'pre_close' to 'prev_close' \(Tushare\) \(bars columns/,
    )
  })

  it('names columns written in capitals, and a header of data', () => {
    refused(
      'bars',
      'Symbol,Time,Open,high,low,close,Volume\n600000.SH,2024-01-03,10,11,9,10,100\n',
      /:1:1: the header does not fit a bars file: rename 'Symbol' to 'symbol', 'Time' to 'time', 'Open' to 'open', 'Volume' to 'volume' \(bars/,
    )
    refused(
      'bars',
      '20240103 00:00,100000,110000,90000,100000,100\n',
      /:1:1: line 1 is a row of data, not a header \(LEAN files have none\): put a header line first/,
      '--symbol',
      '600000.SH',
    )
  })

  it("names ';' and tab separators", () => {
    refused(
      'bars',
      'symbol;time;open;high;low;close;volume\n600000.SH;2024-01-03;10;11;9;10;100\n',
      /:1:1: the header has no ',' but ';' separators: mdq reads comma-separated files \(convert the separators to ','\)/,
    )
    refused(
      'instruments',
      'symbol\tname\n600519.SH\t贵州茅台\n',
      /:1:1: the header has no ',' but tabs: mdq reads comma-separated files/,
    )
  })
})
