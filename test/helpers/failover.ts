/**
 * Runs `failover` while `write` runs again and again: every record written goes to `written`,
 * and those written while the failover was under way to `during` too. The writer stops whatever
 * the failover does (a failover that never comes fails the test, and must not leave the writer
 * running); once the failover is over, the last write is awaited.
 */
export async function writeThroughFailover<T, R>(failover: () => Promise<R>, write: () => Promise<T>, written: T[]): Promise<R & { during: T[] }> {
  let failingOver = true;
  const during: T[] = [];
  const writer = (async () => {
    while (failingOver) {
      const record = await write();
      written.push(record);
      if (failingOver) during.push(record);
    }
  })();
  const result = await failover().finally(() => { failingOver = false; });
  await writer;
  return { ...result, during };
}
