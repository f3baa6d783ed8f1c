import { syncGroongaIndex } from '../../src/ticket/tickets/search/groongaIndex';
import { nowSec } from '../helpers/app';
import { until } from '../helpers/privateRedis';

/**
 * Runs the Groonga server's index until it holds every change made up to now (each run reads the
 * stream to its end; the stream holds back the last EXPORT_SETTLE_SECONDS): progress, not a
 * guessed wait.
 */
export async function indexed(): Promise<void> {
  const t = nowSec();
  await until(async () => (await syncGroongaIndex()).completeUpTo >= t, 'the search index to catch up');
}

/** A new random word (twelve letters): found only in the tickets a test writes it into. */
export const word = () => Array.from({ length: 12 }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(Math.random() * 26)]).join('');
