// Words for what a person typed or pointed at: the nearest known name to a typo, and a file
// error in words rather than an errno code.

/** Edit distance (insertions, deletions, substitutions and swaps of neighbours) between two words. */
export function editDistance(a: string, b: string): number {
  const width = b.length + 1;
  // d[i * width + j]: the distance between the first i letters of a and the first j of b.
  const d = new Uint32Array((a.length + 1) * width);
  const at = (i: number, j: number): number => d[i * width + j] as number;
  for (let j = 0; j <= b.length; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++) {
    d[i * width] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      d[i * width + j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `word`, if it is close enough to be the likely intent: at most a third
 * of the word's letters differ (at least one edit allowed), or one contains the other.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const n = name.toLowerCase();
    if (n === w) return name;
    const distance = editDistance(w, n);
    const allowed = Math.max(1, Math.floor(Math.max(w.length, n.length) / 3));
    const related = distance <= allowed || (w.length >= 3 && (n.includes(w) || w.includes(n)));
    if (related && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** ` (did you mean "x"?)` for the nearest candidate, or an empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = nearest(word, candidates);
  return match === undefined ? '' : ` (did you mean ${JSON.stringify(match)}?)`;
}

const FILE_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many open files',
};

/** A file system error in words: "no such file" for ENOENT, the message otherwise. */
export function fileErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && FILE_ERRORS[code] !== undefined) return FILE_ERRORS[code] as string;
  return err instanceof Error ? err.message : String(err);
}
