/**
 * Emails and domains compare exactly, case aside: they are stored lower-cased and compared byte for
 * byte (binary collation), so `alicé@` and `alice@` are two addresses, for uniqueness as for the
 * list filters; only the case of what a client sends is folded.
 */
import { domainToASCII } from 'node:url';
import { Group, User } from '../../src/db/models';
import { useApi, unique } from '../helpers/app';
import { expectError, expectList, expectSuccess } from '../helpers/envelope';

const api = useApi();
const USERS = '/api/user/user';
const OPERATORS = '/api/user/operator';
const ORGS = '/api/user/organisation';

let adminGroupId: number;
beforeAll(async () => {
  adminGroupId = (await Group.findOne({ where: { type: 'operator', name: 'Administrators' } }))!.id;
});

/** `alice<tag>@<domain>` and the same with an accented e. */
function pair(domain = 'example.com') {
  const tag = unique('x').toLowerCase();
  return { plain: `alice${tag}@${domain}`, accented: `alicé${tag}@${domain}` };
}

const createUser = async (form: Record<string, unknown>) => expectSuccess(await api.post(USERS, form), 'Successfully created new user!');
const createOperator = async (email: string) => expectSuccess(await api.post(OPERATORS, {
  firstname: 'Op', lastname: unique('Erator'), email, groups: [adminGroupId],
}), 'Successfully created new operator!');
const listIds = async (path: string, query: Record<string, unknown>) => expectList(await api.get(path, { limit: 1000, ...query })).map((r) => r.id).sort();

describe('users', () => {
  it('an accented address is another address than the plain one in the same brand', async () => {
    const { plain, accented } = pair();
    const alice = await createUser({ email: plain });
    const alicé = await createUser({ email: accented });
    expect(alicé.email).toBe(accented);
    expect(alicé.id).not.toBe(alice.id);
    expect(await User.count({ where: { email: accented } })).toBe(1);
  });

  it('an accented additional address is free when the plain one is taken, and the other way round', async () => {
    const { plain, accented } = pair();
    await createUser({ email: plain });
    const other = await createUser({ email: unique('o').toLowerCase() + '@example.com', additional_email: [accented] });
    expect(other.additional_emails.map((e: any) => e.email)).toEqual([accented]);
  });

  it('still folds case: the same address in capitals is taken, accents and all', async () => {
    const { accented } = pair();
    await createUser({ email: accented });
    expectError(await api.post(USERS, { email: accented.toUpperCase() }), 422, 'The email has already been taken.');
    // The same accented letter written as e + combining accent is the same address.
    expectError(await api.post(USERS, { email: accented.replace('é', 'e\u0301') }), 422, 'The email has already been taken.');
  });

  it('the email filter finds the address written, not its unaccented twin', async () => {
    const { plain, accented } = pair();
    const alice = await createUser({ email: plain });
    const alicé = await createUser({ email: accented });
    expect(await listIds(USERS, { email: accented })).toEqual([alicé.id]);
    expect(await listIds(USERS, { email: plain })).toEqual([alice.id]);
    expect(await listIds(USERS, { email: accented.toUpperCase() })).toEqual([alicé.id]);
  });

  it('the email filter, on additional addresses too', async () => {
    const { plain, accented } = pair();
    const withPlain = await createUser({ email: unique('a').toLowerCase() + '@example.com', additional_email: [plain] });
    const withAccent = await createUser({ email: unique('b').toLowerCase() + '@example.com', additional_email: [accented] });
    expect(await listIds(USERS, { email: accented })).toEqual([withAccent.id]);
    expect(await listIds(USERS, { email: plain })).toEqual([withPlain.id]);
  });

  it('search still finds an email whatever the case of the term', async () => {
    const tag = unique('srch').toLowerCase();
    const u = await createUser({ email: `${tag}@example.com` });
    expect(await listIds(USERS, { search: tag.toUpperCase() })).toEqual([u.id]);
  });
});

describe('operators', () => {
  it('an accented address is another operator, and the email filter tells them apart', async () => {
    const { plain, accented } = pair('helpdesk.example');
    const alice = await createOperator(plain);
    const alicé = await createOperator(accented);
    expect(await listIds(OPERATORS, { email: accented })).toEqual([alicé.id]);
    expect(await listIds(OPERATORS, { email: plain })).toEqual([alice.id]);
  });
});

describe('organisation domains', () => {
  it('an accented domain is another domain, for claims and for users joining by domain', async () => {
    const tag = unique('d').toLowerCase();
    const [plain, accented] = [`cafe-${tag}.example`, `café-${tag}.example`];
    const plainOrg = expectSuccess(await api.post(ORGS, { name: unique('Plain'), domain: [plain] }), 'Successfully created new organisation!');
    const accentedOrg = expectSuccess(await api.post(ORGS, { name: unique('Accented'), domain: [accented] }), 'Successfully created new organisation!');
    // Stored in punycode, as the domains of emails are (one form per domain).
    expect(accentedOrg.domains).toEqual([domainToASCII(accented)]);
    expect((await createUser({ email: `someone@${accented}` })).organisation_id).toBe(accentedOrg.id);
    expect((await createUser({ email: `someone@${plain}` })).organisation_id).toBe(plainOrg.id);
    expectError(await api.post(ORGS, { name: unique('Again'), domain: [accented.toUpperCase()] }), 422, 'The domain.0 has already been taken.');
  });
});
