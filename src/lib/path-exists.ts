/** Whether a path exists (any kind of file); a missing parent directory counts as absent. */
import { stat } from 'node:fs/promises'

export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}
