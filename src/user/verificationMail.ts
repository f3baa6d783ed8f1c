import { config } from '../config';
import { User } from '../db/models';
import { Joi } from '../lib/validation';
import { frame, fromAddress } from '../mail/compose';
import { mailJobOptions } from '../mail/retries';
import { transportFor } from '../mail/transports';
import { defineJob } from '../queue/jobs';
import { QUEUES } from '../queue/names';
import { formattedName } from './people/presenter';
import { brandOf, issueVerificationToken, verificationUrl } from './verification';

/** The verification mail: a single-use link that lets the person set a password. */
export const verificationMail = defineJob<{ userId: number }>({
  name: 'user.verification',
  queue: QUEUES.mail,
  schema: Joi.object({ userId: Joi.number().integer().min(1).required() }),
  options: mailJobOptions,
  async handle({ userId }) {
    const user = await User.findByPk(userId);
    if (!user) return { skipped: 'the person no longer exists' };
    if (user.password) return { skipped: 'a password is already set' };
    if (user.type === 'operator' && user.active !== 1) return { skipped: 'the operator is inactive' };
    const brand = await brandOf(user);
    if (!brand) throw new Error('No brand to send the mail from');
    const transport = transportFor(brand);
    const { token } = await issueVerificationToken(user.id);
    const hours = Math.round(config().verifyTokenTtl / 3600);
    const { html, text } = frame(brand, {
      paragraphs: [
        `Hello ${formattedName(user)},`,
        `An account was created for you at ${brand.name}. Please verify your email address and choose a password with the link below.`,
        `The link can be used once and expires in ${hours} hours. If you did not expect this email, you can ignore it.`,
      ],
      link: { label: 'Verify your email address', url: verificationUrl(token) },
    });
    const info = await transport.sendMail({
      from: fromAddress(brand),
      to: user.email,
      subject: `Verify your email address at ${brand.name}`,
      html,
      text,
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
    return { messageId: info.messageId, accepted: info.accepted };
  },
});
