import { Either, Schema } from "effect"
import { joinPath, problem, problemsFromParseError, type Problem } from "./Problems.js"

// admin.settings: the shorthand map and the full `fields` list both decode to one normalized field list.

export const SettingType = Schema.Literal("string", "text", "number", "boolean", "select")
export type SettingType = typeof SettingType.Type

export const SettingInput = Schema.Literal(
  "text",
  "textarea",
  "email",
  "password",
  "url",
  "color",
  "tel",
  "number",
  "checkbox",
  "select"
)
export type SettingInput = typeof SettingInput.Type

export type SettingValue = string | number | boolean

const ScalarValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)

const SettingOption = Schema.Union(
  Schema.Struct({ value: ScalarValue, label: Schema.optional(Schema.String) }),
  ScalarValue
)

const SettingKey = Schema.String.pipe(
  Schema.filter((key) =>
    /^[A-Za-z][A-Za-z0-9_.-]*$/.test(key) ||
    `setting key "${key}" must start with a letter and contain only letters, digits, "_", "-" and "."`
  )
)

/** The properties of one setting, shared by both syntaxes. */
const fieldProperties = {
  type: Schema.optional(SettingType),
  label: Schema.optional(Schema.String),
  required: Schema.optional(Schema.Boolean),
  default: Schema.optional(Schema.Unknown),
  help: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  placeholder: Schema.optional(Schema.String),
  input: Schema.optional(SettingInput),
  options: Schema.optional(Schema.Array(SettingOption)),
  public: Schema.optional(Schema.Boolean)
}

export const SettingDefinition = Schema.Struct(fieldProperties)
export type SettingDefinition = typeof SettingDefinition.Type

export const FullSettingDefinition = Schema.Struct({ key: SettingKey, ...fieldProperties })

/** Keys of `admin.settings` that belong to the full syntax; every other key is a shorthand setting. */
export const reservedSettingKeys = ["title", "description", "fields"] as const

export const SettingsSection = Schema.Struct(
  {
    title: Schema.optional(Schema.String),
    description: Schema.optional(Schema.String),
    fields: Schema.optional(Schema.Array(FullSettingDefinition))
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export type SettingsSection = typeof SettingsSection.Type

export interface SettingOptionItem {
  readonly value: SettingValue
  readonly label: string
}

/** The normalized form every consumer uses (validator, admin form, public endpoint, desired state). */
export interface SettingField {
  readonly key: string
  readonly type: SettingType
  readonly label: string
  readonly required: boolean
  readonly default: SettingValue | null
  readonly help: string | null
  readonly placeholder: string | null
  readonly input: SettingInput
  readonly options: ReadonlyArray<SettingOptionItem>
  readonly public: boolean
}

/**
 * Label from a key: split on `_`, `-`, `.`, spaces and camelCase boundaries, keep all-caps runs
 * together, capitalise each word (`api_key` → `Api Key`, `APIKey` → `API Key`).
 */
export const labelFromKey = (key: string): string =>
  key
    .split(/[_\-.\s]+/)
    .flatMap((part) => part.match(/[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+/g) ?? [])
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ")

const defaultInput: Record<SettingType, SettingInput> = {
  string: "text",
  text: "textarea",
  number: "number",
  boolean: "checkbox",
  select: "select"
}

const inputsByType: Record<SettingType, ReadonlyArray<SettingInput>> = {
  string: ["text", "email", "password", "url", "color", "tel"],
  text: ["textarea", "text"],
  number: ["number", "text"],
  boolean: ["checkbox"],
  select: ["select"]
}

const describe = (value: unknown): string => {
  const text = typeof value === "string" ? `"${value}"` : JSON.stringify(value) ?? String(value)
  // An error message never echoes a huge value back.
  return text.length > 80 ? `${text.slice(0, 60)}… (${text.length} characters)` : text
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const COLOR = /^#[0-9a-fA-F]{6}$/

const isUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

/**
 * Largest value one setting may hold, in UTF-8 bytes (a longer text belongs in a file or a table of
 * the extension, not in a settings row every request reads). docs/operations.md, "Limits".
 */
export const maxSettingValueBytes = 64 * 1024

/** Most settings fields one extension may declare (the admin form shows every one of them). */
export const maxSettingFields = 200

const utf8Bytes = (text: string): number => (text.length * 3 <= maxSettingValueBytes ? text.length : new TextEncoder().encode(text).length)

/**
 * Checks one value against its field: type first, then the input kind and the options.
 * Numbers given as numeric strings and booleans given as "true"/"false" are accepted and converted,
 * since form posts and environment substitution deliver strings.
 */
export const validateSettingValue = (field: SettingField, value: unknown): Either.Either<SettingValue, string> => {
  switch (field.type) {
    case "number": {
      const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value
      return typeof number === "number" && Number.isFinite(number)
        ? Either.right(number)
        : Either.left(`must be a number, got ${describe(value)}`)
    }
    case "boolean": {
      if (typeof value === "boolean") return Either.right(value)
      if (value === "true" || value === "false") return Either.right(value === "true")
      return Either.left(`must be true or false, got ${describe(value)}`)
    }
    case "select": {
      const match = field.options.find((option) => option.value === value || String(option.value) === String(value))
      return match !== undefined
        ? Either.right(match.value)
        : Either.left(
          `must be one of ${field.options.map((option) => describe(option.value)).join(", ")}, got ${describe(value)}`
        )
    }
    case "string":
    case "text": {
      if (typeof value !== "string") return Either.left(`must be a string, got ${describe(value)}`)
      if (utf8Bytes(value) > maxSettingValueBytes) {
        return Either.left(`is ${utf8Bytes(value)} bytes long; a setting holds at most ${maxSettingValueBytes} bytes (64 KiB)`)
      }
      if (field.required && value.trim() === "") return Either.left("is required")
      if (value === "") return Either.right(value)
      if (field.input === "email" && !EMAIL.test(value)) return Either.left(`must be an email address, got ${describe(value)}`)
      if (field.input === "url" && !isUrl(value)) return Either.left(`must be an http(s) URL, got ${describe(value)}`)
      if (field.input === "color" && !COLOR.test(value)) return Either.left(`must be a colour #rrggbb, got ${describe(value)}`)
      return Either.right(value)
    }
  }
}

/**
 * Validates a whole map of values against the fields: unknown keys, required fields without a value
 * or default, and each value by its field. Returns the values as stored (converted), or the problems.
 */
export const validateSettingValues = (
  fields: ReadonlyArray<SettingField>,
  values: Readonly<Record<string, unknown>>,
  basePath = ""
): Either.Either<Record<string, SettingValue>, ReadonlyArray<Problem>> => {
  const problems: Array<Problem> = []
  const accepted: Record<string, SettingValue> = {}
  const byKey = new Map(fields.map((field) => [field.key, field]))
  for (const [key, value] of Object.entries(values)) {
    const field = byKey.get(key)
    if (field === undefined) {
      problems.push(problem(joinPath(basePath, key), `unknown setting (known: ${[...byKey.keys()].join(", ") || "none"})`))
      continue
    }
    if (value === null || value === undefined) {
      if (field.required && field.default === null) problems.push(problem(joinPath(basePath, key), "is required"))
      continue
    }
    Either.match(validateSettingValue(field, value), {
      onLeft: (message) => problems.push(problem(joinPath(basePath, key), message)),
      onRight: (converted) => {
        accepted[key] = converted
      }
    })
  }
  return problems.length > 0 ? Either.left(problems) : Either.right(accepted)
}

/** The value a field reads as: the stored one, else its default. */
export const effectiveSettings = (
  fields: ReadonlyArray<SettingField>,
  stored: Readonly<Record<string, unknown>>
): Record<string, unknown> =>
  Object.fromEntries(fields.map((field) => [field.key, field.key in stored ? stored[field.key] : field.default]))

const normalizeOptions = (options: SettingDefinition["options"]): ReadonlyArray<SettingOptionItem> =>
  (options ?? []).map((option) =>
    typeof option === "object"
      ? { value: option.value, label: option.label ?? String(option.value) }
      : { value: option, label: String(option) }
  )

interface NormalizeResult {
  readonly fields: ReadonlyArray<SettingField>
  readonly errors: ReadonlyArray<Problem>
  readonly warnings: ReadonlyArray<Problem>
}

const normalizeField = (
  key: string,
  definition: SettingDefinition,
  path: string,
  errors: Array<Problem>,
  warnings: Array<Problem>
): SettingField => {
  const type: SettingType = definition.type ?? (definition.options !== undefined ? "select" : "string")
  const options = normalizeOptions(definition.options)
  const input = definition.input ?? defaultInput[type]
  if (definition.input !== undefined && !inputsByType[type].includes(definition.input)) {
    errors.push(problem(`${path}.input`, `input "${definition.input}" does not fit type "${type}" (use ${inputsByType[type].join(", ")})`))
  }
  if (type === "select" && options.length === 0) {
    errors.push(problem(`${path}.options`, `a select setting needs at least one option`))
  }
  if (type !== "select" && definition.options !== undefined) {
    warnings.push(problem(`${path}.options`, `options are ignored for type "${type}"`))
  }
  if (definition.help !== undefined && definition.description !== undefined) {
    warnings.push(problem(`${path}.description`, `both help and description are set; help is used`))
  }
  const field: SettingField = {
    key,
    type,
    label: definition.label ?? labelFromKey(key),
    required: definition.required ?? false,
    default: null,
    help: definition.help ?? definition.description ?? null,
    placeholder: definition.placeholder ?? null,
    input,
    options,
    public: definition.public ?? false
  }
  if (definition.default === undefined || definition.default === null) return field
  return Either.match(validateSettingValue(field, definition.default), {
    onLeft: (message) => {
      errors.push(problem(`${path}.default`, `default ${message}`))
      return field
    },
    onRight: (value) => ({ ...field, default: value })
  })
}

/** Normalizes a decoded `admin.settings` section (shorthand keys and `fields` together). */
export const normalizeSettings = (section: SettingsSection, basePath = "admin.settings"): NormalizeResult => {
  const errors: Array<Problem> = []
  const warnings: Array<Problem> = []
  const fields: Array<SettingField> = []
  const seen = new Map<string, string>()
  // Counted before any field is decoded, so a manifest with thousands of fields costs nothing.
  const declared = (section.fields?.length ?? 0) + Object.keys(section).filter((key) => !(reservedSettingKeys as ReadonlyArray<string>).includes(key)).length
  if (declared > maxSettingFields) {
    errors.push(problem(basePath, `declares ${declared} settings; an extension may declare at most ${maxSettingFields}`))
    return { fields, errors, warnings }
  }
  const add = (key: string, definition: SettingDefinition, path: string) => {
    const first = seen.get(key)
    if (first !== undefined) {
      errors.push(problem(path, `duplicate setting key "${key}" (first defined at ${first})`))
      return
    }
    seen.set(key, path)
    fields.push(normalizeField(key, definition, path, errors, warnings))
  }
  ;(section.fields ?? []).forEach((definition, index) => {
    const { key, ...rest } = definition
    add(key, rest, joinPath(basePath, "fields", index))
  })
  const reserved: ReadonlySet<string> = new Set(reservedSettingKeys)
  for (const [key, raw] of Object.entries(section)) {
    if (reserved.has(key)) continue
    const path = joinPath(basePath, key)
    const keyCheck = Schema.decodeUnknownEither(SettingKey)(key)
    if (Either.isLeft(keyCheck)) {
      errors.push(problem(path, `setting key "${key}" must start with a letter and contain only letters, digits, "_", "-" and "."`))
      continue
    }
    const decoded = Schema.decodeUnknownEither(SettingDefinition, { errors: "all", onExcessProperty: "error" })(raw)
    if (Either.isLeft(decoded)) {
      errors.push(
        ...decoded.left.issue._tag === "Type" && (raw === null || typeof raw !== "object")
          ? [problem(path, `a shorthand setting must be a definition object such as { type: string }, got ${describe(raw)}`)]
          : problemsFromParseError(decoded.left, path)
      )
      continue
    }
    add(key, decoded.right, path)
  }
  return { fields, errors, warnings }
}
