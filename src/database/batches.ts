/**
 * Runs `deleteBatch(size)` (one statement deleting at most `size` rows, committing on its own)
 * until a batch comes back short, so a backlog never becomes one long delete; the rows deleted.
 */
export async function deleteInBatches(size: number, deleteBatch: (size: number) => Promise<number>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const batch = await deleteBatch(size);
    deleted += batch;
    if (batch < size) return deleted;
  }
}
