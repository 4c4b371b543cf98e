// Registry cache freshness (DESIGN.md §9), as pure functions of the cache time, now and the TTL.

export type CacheStatus = "fresh" | "expired" | "no-expiry" | "missing"

export const cacheStatus = (fetchedAt: Date | undefined, now: Date, ttlSeconds: number): CacheStatus => {
  if (fetchedAt === undefined) return "missing"
  if (ttlSeconds === 0) return "no-expiry"
  return ageSeconds(fetchedAt, now) <= ttlSeconds ? "fresh" : "expired"
}

export const ageSeconds = (fetchedAt: Date, now: Date): number =>
  Math.max(0, Math.floor((now.getTime() - fetchedAt.getTime()) / 1000))
