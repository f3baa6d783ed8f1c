import { config } from '../config';
import { User } from '../db/models';
import { Joi } from '../lib/validation';
import { frame, fromAddress, ownMailHeaders } from '../mail/compose';
import { mailJobOptions } from '../mail/retries';
import { transportFor } from '../mail/transports';
import { defineJob } from '../queue/jobs';
import { QUEUES } from '../queue/names';
import { formattedName } from './people/presenter';
import { brandOf, issueVerificationToken, revokeVerificationTokens, verificationUrl } from './verification';

/** Why a person gets no verification mail, if they get none. */
function skipReason(user: User | null): string | null {
  if (!user) return 'the person no longer exists';
  if (user.password) return 'a password is already set';
  if (user.active !== 1) return `the ${user.type === 'operator' ? 'operator' : 'user'} is inactive`;
  return null;
}

/** The verification mail: a single-use link that lets the person set a password. */
export const verificationMail = defineJob<{ userId: number }>({
  name: 'user.verification',
  queue: QUEUES.mail,
  schema: Joi.object({ userId: Joi.number().integer().min(1).required() }),
  options: mailJobOptions,
  async handle({ userId }) {
    const before = await User.findByPk(userId);
    const skip = skipReason(before);
    if (skip) return { skipped: skip };
    // The person is read again after the token is issued: an update that changes the address (or
    // sets a password, or deactivates) revokes the token if it commits later, and is seen here if
    // it committed earlier, so the link never goes to an address it no longer belongs to.
    const { token } = await issueVerificationToken(userId);
    const user = await User.findByPk(userId);
    const skipNow = skipReason(user);
    if (skipNow || !user) {
      await revokeVerificationTokens(userId);
      return { skipped: skipNow };
    }
    const brand = await brandOf(user);
    if (!brand) throw new Error('No brand to send the mail from');
    const transport = transportFor(brand);
    const hours = Math.round(config().verifyTokenTtl / 3600);
    const { html, text } = frame(brand, {
      paragraphs: [
        `Hello ${formattedName(user)},`,
        `An account was created for you at ${brand.name}. Please verify your email address and choose a password with the link below.`,
        `The link can be used once and expires in ${hours} hours. If you did not expect this email, you can ignore it.`,
      ],
      link: { label: 'Verify your email address', url: verificationUrl(token) },
    });
    const from = await fromAddress(brand);
    const info = await transport.sendMail({
      from,
      to: user.email,
      subject: `Verify your email address at ${brand.name}`,
      html,
      text,
      headers: ownMailHeaders(from.address, 'auto-generated'),
    });
    return { messageId: info.messageId, accepted: info.accepted };
  },
});
