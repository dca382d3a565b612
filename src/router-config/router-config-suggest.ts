/**
 * "Did you mean" for misspelt keys and values: optimal string alignment distance (Levenshtein plus
 * adjacent transpositions, so `Lenght` is one edit from `Length`), compared case-insensitively.
 */

/** Edit distance between `a` and `b` counting insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1
  const cols = b.length + 1
  const d: number[][] = Array.from({ length: rows }, (_, i) => {
    const row = new Array<number>(cols).fill(0)
    row[0] = i
    return row
  })
  for (let j = 0; j < cols; j++) d[0][j] = j
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2][j - 2] + 1)
      d[i][j] = best
    }
  }
  return d[rows - 1][cols - 1]
}

/** The candidate nearest to `word`, if it is close enough to be a likely typo. */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > 100) return undefined
  const lower = word.toLowerCase()
  const allowed = lower.length <= 3 ? 1 : lower.length <= 6 ? 2 : 3
  let best: string | undefined
  let bestScore = Infinity
  for (const c of candidates) {
    const distance = editDistance(lower, c.toLowerCase())
    // A case-only difference beats a real edit; ties keep the first candidate.
    const score = distance * 2 + (c === word ? 0 : 1)
    if (distance <= allowed && score < bestScore) {
      best = c
      bestScore = score
    }
  }
  return best
}
