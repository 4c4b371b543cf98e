import { Effect, Either } from "effect"
import { Header, Parser, Pax, type ReadEntry } from "tar"
import { gunzip, gzip } from "node:zlib"

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

/** gzip at level 6 with no name and mtime 0 in the header (node:zlib writes neither) and OS "Unix". */
export const gzipDeterministic = (data: Uint8Array): Effect.Effect<Buffer> =>
  Effect.async<Buffer>((resume) => {
    gzip(data, { level: 6 }, (error, result) => {
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

/**
 * gunzip with a hard cap on the output: decompression stops as soon as `maxOutput` bytes would be
 * exceeded, so a bomb never gets to allocate its payload.
 */
export const gunzipCapped = (data: Uint8Array, maxOutput: number): Effect.Effect<Buffer, DecompressFailure> =>
  Effect.async<Buffer, DecompressFailure>((resume) => {
    gunzip(data, { maxOutputLength: maxOutput }, (error, result) => {
      if (error === null) return resume(Effect.succeed(result))
      const code = (error as NodeJS.ErrnoException).code
      if (code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) return resume(Effect.fail({ _tag: "TooLarge" }))
      if (code === "Z_BUF_ERROR") return resume(Effect.fail({ _tag: "Truncated", detail: "the gzip stream ends early" }))
      resume(Effect.fail({ _tag: "Corrupt", detail: `the gzip data is damaged (${error.message})` }))
    })
  })

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

/** Whether the first 512 bytes are a tar header with a valid checksum. */
const startsWithTarHeader = (data: Buffer): boolean => {
  if (data.length < BLOCK) return false
  try {
    const header = new Header(data.subarray(0, BLOCK))
    return header.cksumValid && !header.nullBlock
  } catch {
    return false
  }
}

/**
 * Reads every entry of an uncompressed tar stream held in memory, with tar's Parser. Any warning
 * of the parser (bad checksum, truncated body, unknown format) fails the whole read, and so does a
 * stream without its end-of-archive marker. Synchronous: the parser consumes the buffer in `end()`.
 */
export const parseTar = (data: Buffer, maxEntries: number): Either.Either<ReadonlyArray<RawTarEntry>, TarParseFailure> => {
  if (isGzip(data)) return Either.left({ _tag: "NotTar", detail: "the tar data is compressed twice" })
  if (!startsWithTarHeader(data)) return Either.left({ _tag: "NotTar", detail: "the data is neither gzip nor tar" })
  if (data.length % BLOCK !== 0) {
    return Either.left({ _tag: "Truncated", detail: "the tar data does not end on a 512-byte block" })
  }
  const entries: Array<RawTarEntry> = []
  let seen = 0
  let failure: TarParseFailure | undefined
  let sawEof = false
  const parser = new Parser({ strict: false, brotli: false, zstd: false })
  const fail = (value: TarParseFailure) => {
    if (failure === undefined) failure = value
  }
  parser.on("warn", (code: string, message: string | Error) => {
    const text = typeof message === "string" ? message : message.message
    if (/truncated/i.test(text)) fail({ _tag: "Truncated", detail: `the tar data ends early (${text})` })
    else if (code === "TAR_BAD_ARCHIVE" && entries.length === 0) fail({ _tag: "NotTar", detail: "the data is neither gzip nor tar" })
    else fail({ _tag: "Corrupt", detail: `the tar data is damaged (${text})` })
  })
  parser.on("error", (error: Error) => fail({ _tag: "Corrupt", detail: `the tar data is damaged (${error.message})` }))
  parser.on("eof", () => {
    sawEof = true
  })
  parser.on("ignoredEntry", (entry: ReadEntry) => {
    fail({ _tag: "Unsupported", path: entry.path, type: entry.type })
  })
  parser.on("entry", (entry: ReadEntry) => {
    seen++
    if (failure !== undefined || seen > maxEntries) {
      if (failure === undefined) fail({ _tag: "TooManyEntries", count: seen })
      entry.resume()
      return
    }
    const chunks: Array<Buffer> = []
    entry.on("data", (chunk: Buffer) => chunks.push(chunk))
    entry.on("end", () => {
      entries.push({
        path: entry.path,
        type: entry.type,
        size: entry.size,
        mode: entry.mode ?? 0,
        linkpath: entry.linkpath,
        data: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      })
    })
  })
  parser.end(data)
  if (failure !== undefined) return Either.left(failure)
  if (!sawEof) return Either.left({ _tag: "Truncated", detail: "the tar data ends before its end-of-archive marker" })
  return Either.right(entries)
}
