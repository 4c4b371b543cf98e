import { Effect, Either } from "effect"
import { Header } from "tar/header"
import { Parser } from "tar/parse"
import { Pax } from "tar/pax"
import type { ReadEntry } from "tar/read-entry"
import { createGunzip, gunzipSync, gzip } from "node:zlib"

// The tar and gzip layer of `.host` archives, on the `tar` package (header encoding, pax records,
// the streaming parser) and node:zlib. Nothing here touches the file system: archives are bytes.

/** The fixed modification time of every packed entry (1980-01-01T00:00:00Z, as reproducible builds do). */
export const fixedMtime = new Date(Date.UTC(1980, 0, 1))

export type TarEntryToWrite =
  | { readonly type: "File"; readonly path: string; readonly data: Uint8Array; readonly mode: number }
  | { readonly type: "Directory"; readonly path: string; readonly mode: number }

const BLOCK = 512
const zeroBlock = Buffer.alloc(BLOCK)
const padding = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK

const encodeHeader = (entry: TarEntryToWrite, size: number): Array<Buffer> => {
  const fields = {
    path: entry.path,
    mode: entry.mode,
    uid: 0,
    gid: 0,
    size,
    mtime: fixedMtime,
    type: entry.type,
    uname: "",
    gname: ""
  } as const
  const header = new Header(fields)
  const block = Buffer.alloc(BLOCK)
  const needPax = header.encode(block)
  // A path that does not fit ustar's name/prefix fields (or is not ASCII) goes into a pax record
  // holding only the path, so the bytes stay deterministic.
  return needPax ? [new Pax({ path: entry.path }).encode(), block] : [block]
}

/**
 * A deterministic ustar/pax stream of the entries, in the order given: uid/gid 0, empty owner
 * names, the fixed mtime, and the two zero blocks that end an archive.
 */
export const encodeTar = (entries: ReadonlyArray<TarEntryToWrite>): Buffer => {
  const parts: Array<Uint8Array> = []
  for (const entry of entries) {
    const size = entry.type === "File" ? entry.data.byteLength : 0
    parts.push(...encodeHeader(entry, size))
    if (entry.type === "File" && size > 0) {
      parts.push(entry.data)
      const pad = padding(size)
      if (pad > 0) parts.push(zeroBlock.subarray(0, pad))
    }
  }
  parts.push(zeroBlock, zeroBlock)
  return Buffer.concat(parts)
}

/** Byte 9 of a gzip member: the operating system. Fixed to Unix so every platform writes the same bytes. */
const GZIP_OS_OFFSET = 9
const GZIP_OS_UNIX = 3

/**
 * Output buffer of one deflate call on the thread pool. Each full buffer is a round trip to this
 * thread, so 1 MiB makes a few of them where zlib's default 16 KiB made hundreds; deflate's output
 * does not depend on it (the bytes are the same).
 */
const gzipChunkBytes = 1024 * 1024

/**
 * Deflate level 5: node's zlib at 5 packs a tree within about 1 % of its size at 6 in about 70 % of
 * the time, and still smaller than `gzip -6` (docs/decisions.md "Archives are deflated at level 5").
 */
const gzipLevel = 5

/** gzip at level 5 with no name and mtime 0 in the header (node:zlib writes neither) and OS "Unix". */
export const gzipDeterministic = (data: Uint8Array): Effect.Effect<Buffer> =>
  Effect.async<Buffer>((resume) => {
    gzip(data, { level: gzipLevel, chunkSize: gzipChunkBytes }, (error, result) => {
      if (error !== null) resume(Effect.die(error))
      else {
        result[GZIP_OS_OFFSET] = GZIP_OS_UNIX
        resume(Effect.succeed(result))
      }
    })
  })

export const isGzip = (data: Uint8Array): boolean => data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b

export type DecompressFailure =
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Truncated"; readonly detail: string }
  | { readonly _tag: "Corrupt"; readonly detail: string }

/** One entry as the tar stream declares it (path not yet checked). */
export interface RawTarEntry {
  readonly path: string
  readonly type: string
  readonly size: number
  readonly mode: number
  readonly linkpath: string | undefined
  readonly data: Buffer
}

export type TarParseFailure =
  | { readonly _tag: "NotTar"; readonly detail: string }
  | { readonly _tag: "Truncated"; readonly detail: string }
  | { readonly _tag: "Corrupt"; readonly detail: string }
  | { readonly _tag: "TooManyEntries"; readonly count: number }
  | { readonly _tag: "Unsupported"; readonly path: string; readonly type: string }

/**
 * Most zero bytes accepted after the end-of-archive marker: tar pads an archive to its record size
 * (10 KiB by default, 1 MiB with `-b 2048`); anything beyond is refused as it arrives.
 */
export const maxTrailingBytes = 1024 * 1024

interface TarCollector {
  readonly write: (chunk: Buffer) => void
  readonly end: () => Either.Either<ReadonlyArray<RawTarEntry>, TarParseFailure>
  readonly failed: () => boolean
}

/** What one collector has read so far; its steps below change it in place, once per event or chunk. */
interface Collecting {
  readonly parser: Parser
  readonly maxEntries: number
  readonly entries: Array<RawTarEntry>
  /** Entries the parser announced, kept or not. */
  seen: number
  /** Bytes written in. */
  total: number
  /** The first failure; later ones are not reported. */
  failure: TarParseFailure | undefined
  sawEof: boolean
  /** Bytes after the end-of-archive marker. */
  trailing: number
  /** The bytes before the first full block, until it is checked; undefined once it is. */
  head: Buffer | undefined
  /** True while the parser reads the first block alone: what it says of that block is the head check. */
  readingHead: boolean
}

const fail = (state: Collecting, value: TarParseFailure) => {
  if (state.failure === undefined) state.failure = value
}

const notTar: TarParseFailure = { _tag: "NotTar", detail: "the data is neither gzip nor tar" }

/**
 * A parser warning: the first block not being a tar header (the parser could not decode it, so its
 * warning carries no header, or its checksum is wrong), a truncated body, an archive without a valid
 * entry, or anything else as damage.
 */
const onWarning = (state: Collecting, code: string, message: string | Error, data: unknown) => {
  const text = typeof message === "string" ? message : message.message
  if (state.readingHead && !decodedHeader(data)) fail(state, notTar)
  else if (/truncated/i.test(text)) fail(state, { _tag: "Truncated", detail: `the tar data ends early (${text})` })
  else if (code === "TAR_BAD_ARCHIVE" && state.entries.length === 0) fail(state, { _tag: "NotTar", detail: "the data is neither gzip nor tar" })
  else fail(state, { _tag: "Corrupt", detail: `the tar data is damaged (${text})` })
}

/** Keeps an entry's bytes (one chunk as it came, several joined), unless the read failed or has too many. */
const onEntry = (state: Collecting, entry: ReadEntry) => {
  state.seen++
  if (state.failure !== undefined || state.seen > state.maxEntries) {
    if (state.failure === undefined) fail(state, { _tag: "TooManyEntries", count: state.seen })
    entry.resume()
    return
  }
  const chunks: Array<Buffer> = []
  entry.on("data", (chunk: Buffer) => chunks.push(chunk))
  entry.on("end", () => {
    state.entries.push({
      path: entry.path,
      type: entry.type,
      size: entry.size,
      mode: entry.mode ?? 0,
      linkpath: entry.linkpath,
      data: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
    })
  })
}

/** Whether a warning's data holds a header the parser decoded with a valid checksum. */
const decodedHeader = (data: unknown): boolean => {
  const header = data !== null && typeof data === "object" ? (data as { readonly header?: unknown }).header : undefined
  return header !== null && typeof header === "object" && (header as { readonly cksumValid?: unknown }).cksumValid === true
}

const listen = (state: Collecting) => {
  const { parser } = state
  parser.on("warn", (code: string, message: string | Error, data: unknown) => onWarning(state, code, message, data))
  // A zero block first is an empty archive at best: not a package.
  parser.on("nullBlock", () => {
    if (state.readingHead) fail(state, notTar)
  })
  parser.on("error", (error: Error) => fail(state, { _tag: "Corrupt", detail: `the tar data is damaged (${error.message})` }))
  parser.on("eof", () => {
    state.sawEof = true
  })
  parser.on("ignoredEntry", (entry: ReadEntry) => {
    fail(state, { _tag: "Unsupported", path: entry.path, type: entry.type })
  })
  parser.on("entry", (entry: ReadEntry) => onEntry(state, entry))
}

/** Less than a block in all: not tar (and not compressed twice, which the parser would undo). */
const checkShortHead = (state: Collecting, head: Buffer) => {
  fail(state, isGzip(head) ? { _tag: "NotTar", detail: "the tar data is compressed twice" } : notTar)
}

/**
 * The first block decides whether this is tar at all: not gzip (compressed twice, which the parser would
 * undo), and a tar header with a valid checksum. The parser reads that block alone first, so its own
 * decoding of the header is the check (docs/decisions.md "registry:build: less work around each archive").
 */
const writeHead = (state: Collecting, head: Buffer) => {
  if (isGzip(head)) return fail(state, { _tag: "NotTar", detail: "the tar data is compressed twice" })
  state.readingHead = true
  state.parser.write(head.subarray(0, BLOCK))
  state.readingHead = false
  if (state.failure === undefined && head.length > BLOCK) state.parser.write(head.subarray(BLOCK))
}

/**
 * After the end-of-archive marker the parser would only buffer (copying its buffer on every write,
 * quadratic in the trailing size), so the trailer is checked here: zeros, as tar pads to its record
 * size, and at most `maxTrailingBytes` of them (docs/decisions.md).
 */
const checkTrailer = (state: Collecting, chunk: Buffer) => {
  state.trailing += chunk.length
  if (state.trailing > maxTrailingBytes) {
    fail(state, { _tag: "Corrupt", detail: `it has more than ${maxTrailingBytes / 1024 / 1024} MiB of data after its end-of-archive marker` })
  } else if (chunk.some((byte) => byte !== 0)) {
    fail(state, { _tag: "Corrupt", detail: "it has data after its end-of-archive marker" })
  }
}

const writeChunk = (state: Collecting, chunk: Buffer) => {
  if (state.failure !== undefined) return
  state.total += chunk.length
  if (state.sawEof && state.head === undefined) return checkTrailer(state, chunk)
  if (state.head !== undefined) {
    // The first chunk is usually the whole stream (an archive read at once): it is not copied.
    const head = state.head.length === 0 ? chunk : Buffer.concat([state.head, chunk])
    if (head.length < BLOCK) {
      state.head = head
      return
    }
    state.head = undefined
    return writeHead(state, head)
  }
  state.parser.write(chunk)
}

const endCollecting = (state: Collecting): Either.Either<ReadonlyArray<RawTarEntry>, TarParseFailure> => {
  if (state.failure === undefined && state.head !== undefined) checkShortHead(state, state.head)
  if (state.failure === undefined && state.total % BLOCK !== 0) {
    fail(state, { _tag: "Truncated", detail: "the tar data does not end on a 512-byte block" })
  }
  if (state.failure === undefined) state.parser.end()
  if (state.failure !== undefined) return Either.left(state.failure)
  if (!state.sawEof) return Either.left({ _tag: "Truncated", detail: "the tar data ends before its end-of-archive marker" })
  return Either.right(state.entries)
}

/**
 * Feeds a tar stream, chunk by chunk, to tar's Parser and collects its entries. Any warning of the
 * parser (bad checksum, truncated body, unknown format) fails the whole read, and so does a stream
 * that does not start with a tar header, does not end on a block, or lacks its end-of-archive marker.
 */
const tarCollector = (maxEntries: number): TarCollector => {
  const state: Collecting = {
    parser: new Parser({ strict: false, brotli: false, zstd: false }),
    maxEntries,
    entries: [],
    seen: 0,
    total: 0,
    failure: undefined,
    sawEof: false,
    trailing: 0,
    head: Buffer.alloc(0),
    readingHead: false
  }
  listen(state)
  return {
    failed: () => state.failure !== undefined,
    write: (chunk) => writeChunk(state, chunk),
    end: () => endCollecting(state)
  }
}

/** Reads every entry of an uncompressed tar stream held in memory. */
export const parseTar = (data: Buffer, maxEntries: number): Either.Either<ReadonlyArray<RawTarEntry>, TarParseFailure> => {
  const collector = tarCollector(maxEntries)
  collector.write(data)
  return collector.end()
}

export type TarReadFailure = TarParseFailure | DecompressFailure

/**
 * The output of one inflate call of the stream below, and the most a small archive is inflated to on this
 * thread at once. An archive that inflates to at most this much reaches the stream's parser in a single
 * chunk, so inflating it at once and parsing it gives the same answer; for a few-KiB extension the
 * stream's events and thread-pool round trips cost about twice the inflation and the parse
 * (docs/decisions.md "Small archives are inflated at once").
 */
const inflateChunkBytes = 256 * 1024

const gzipFailure = (error: NodeJS.ErrnoException): DecompressFailure =>
  error.code === "Z_BUF_ERROR"
    ? { _tag: "Truncated", detail: "the gzip stream ends early" }
    : { _tag: "Corrupt", detail: `the gzip data is damaged (${error.message})` }

/**
 * The stream's answer for an archive that inflates to at most `inflateChunkBytes` (one chunk), reached
 * on this thread; `undefined` when it inflates to more or its gzip data is damaged, which the stream
 * then reads as before (where a damaged tar head may be reported before the gzip damage after it).
 */
const gunzipAndParseTarAtOnce = (
  data: Uint8Array,
  maxOutput: number,
  maxEntries: number
): Either.Either<ReadonlyArray<RawTarEntry>, TarReadFailure> | undefined => {
  const cap = Math.min(maxOutput, inflateChunkBytes)
  let inflated: Buffer
  try {
    inflated = gunzipSync(data, { maxOutputLength: cap, chunkSize: 16 * 1024 })
  } catch (error) {
    // Past `maxOutput` within one chunk the stream stops before it parses anything, as here.
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" && cap === maxOutput) return Either.left({ _tag: "TooLarge" })
    return undefined
  }
  return parseTar(inflated, maxEntries)
}

/**
 * gunzip and parse. An archive that inflates to one chunk is inflated at once on this thread; a larger
 * one is streamed: zlib inflates the next chunk on the thread pool while this thread parses the one
 * before (as `tar xzf` runs gzip and tar side by side). The output is capped at `maxOutput` bytes: past
 * it, decompression stops at once, so a bomb never inflates.
 */
export const gunzipAndParseTar = (
  data: Uint8Array,
  maxOutput: number,
  maxEntries: number
): Effect.Effect<ReadonlyArray<RawTarEntry>, TarReadFailure> =>
  Effect.suspend(() => gunzipAndParseTarAtOnce(data, maxOutput, maxEntries) ?? gunzipAndParseTarStreamed(data, maxOutput, maxEntries))

/** The streamed read; exported so a test can hold the read at once to the same answers. */
export const gunzipAndParseTarStreamed = (
  data: Uint8Array,
  maxOutput: number,
  maxEntries: number
): Effect.Effect<ReadonlyArray<RawTarEntry>, TarReadFailure> =>
  Effect.async<ReadonlyArray<RawTarEntry>, TarReadFailure>((resume) => {
    const collector = tarCollector(maxEntries)
    const inflate = createGunzip({ chunkSize: inflateChunkBytes })
    let produced = 0
    let done = false
    const finish = (result: Effect.Effect<ReadonlyArray<RawTarEntry>, TarReadFailure>) => {
      if (done) return
      done = true
      inflate.destroy()
      resume(result)
    }
    // Parsing is deferred to a microtask, so zlib queues its next inflate before this thread parses.
    inflate.on("data", (chunk: Buffer) => {
      produced += chunk.length
      if (produced > maxOutput) return finish(Effect.fail({ _tag: "TooLarge" }))
      queueMicrotask(() => {
        if (done) return
        collector.write(chunk)
        // A failed parse (bad header, too many entries) stops the inflation too.
        if (collector.failed()) {
          const result = collector.end()
          if (Either.isLeft(result)) finish(Effect.fail(result.left))
        }
      })
    })
    inflate.on("error", (error: NodeJS.ErrnoException) => {
      finish(Effect.fail(gzipFailure(error)))
    })
    inflate.on("end", () =>
      queueMicrotask(() => {
        if (done) return
        const result = collector.end()
        finish(Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(result.left))
      })
    )
    inflate.end(data)
    return Effect.sync(() => {
      done = true
      inflate.destroy()
    })
  })
