import { config } from '../config';
import { User } from '../db/models';
import { Joi } from '../lib/validation';
import { frameRendered, fromAddress, ownMailHeaders } from '../mail/compose';
import { mailJobOptions } from '../mail/retries';
import { transportFor } from '../mail/transports';
import { defineJob } from '../queue/jobs';
import { QUEUES } from '../queue/names';
import { brandUrls, person, recipientLocales, renderMail, shippedTemplateId, templateFor, translatedTemplate } from '../ticket/mail/content';
import { brandOf, issueVerificationToken, revokeVerificationTokens, verificationUrl } from './verification';

/** Why a person gets no verification mail, if they get none. */
function skipReason(user: User | null): string | null {
  if (!user) return 'the person no longer exists';
  if (user.password) return 'a password is already set';
  if (user.active !== 1) return `the ${user.type === 'operator' ? 'operator' : 'user'} is inactive`;
  return null;
}

/** The email template of the verification mail (src/seed/emailTemplates.ts). */
export const VERIFICATION_TEMPLATE = 'user_email_verification';

/**
 * The verification mail: a single-use link that lets the person set a password. Its words are the
 * `user_email_verification` email template (the brand's own version when it has one), in the
 * person's language when the template is translated to it, else the brand's default, as a ticket
 * mail is; framed by the brand's email header and footer.
 */
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
    const template = await templateFor(await shippedTemplateId(VERIFICATION_TEMPLATE), brand.id);
    if (!template) throw new Error(`No ${VERIFICATION_TEMPLATE} email template (the seed adds it: npm run seed)`);
    const transport = transportFor(brand);
    const audience = user.type === 'operator' ? 'operator' : 'user';
    const [locales, urls] = await Promise.all([recipientLocales(user, brand, audience), brandUrls(brand)]);
    const { subject, html, text } = renderMail(await translatedTemplate(template, locales), {
      user: person(user, true),
      brand: { name: brand.name, frontend_url: urls.frontend },
      verification: { url: verificationUrl(token), hours: Math.round(config().verifyTokenTtl / 3600) },
    });
    const framed = frameRendered(brand, { html, text });
    const from = await fromAddress(brand);
    const info = await transport.sendMail({
      from,
      to: user.email,
      subject,
      html: framed.html,
      text: framed.text,
      headers: ownMailHeaders(from.address, 'auto-generated'),
    });
    return { messageId: info.messageId, accepted: info.accepted };
  },
});
