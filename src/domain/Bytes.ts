// Sizes as people read them in messages: bytes below 1 KiB, then KiB and MiB with one decimal.

export const formatBytes = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}
