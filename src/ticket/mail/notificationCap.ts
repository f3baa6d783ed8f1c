import { config } from '../../config';
import { countInWindow } from '../../redis/windowCounter';

/**
 * The last line of defence against mail loops that no header gives away: each automatic mail to
 * an address about a ticket is counted in Redis (shared by every mail worker), and past
 * MAIL_NOTIFY_CAP in MAIL_NOTIFY_CAP_WINDOW_SECONDS that address gets no more of them for the
 * rest of the window. Mails written by people (replies, forwards) are never capped. While Redis
 * cannot count, mail goes out (the sending itself needs Redis anyway).
 */
export async function overNotificationCap(ticketId: number, addresses: string[]): Promise<Set<string>> {
  const { notifyCap, notifyCapWindowSeconds } = config().mailbox;
  const capped = new Set<string>();
  if (!notifyCap) return capped;
  for (const address of new Set(addresses)) {
    const counted = await countInWindow(`notifycap:${ticketId}:${address.toLowerCase()}`, notifyCapWindowSeconds);
    if (counted && counted.count > notifyCap) capped.add(address);
  }
  return capped;
}
