/**
 * A request whose checks saw a record that another transaction deleted before its own insert
 * (the foreign key then refuses it, 1452) runs once more and answers what a later request gets:
 * the precise 422 of its checks, not the foreign key's generic message.
 */
import { Department, DepartmentBrand, Ticket } from '../../src/db/models';
import { sequelize } from '../../src/db/sequelize';
import { useApi, unique, newEmail } from '../helpers/app';
import { expectError } from '../helpers/envelope';
import { raceAfterHeld } from '../helpers/races';
import { ticketContext, type TicketContext } from '../ticket/ticketSupport';

const api = useApi();
let ctx: TicketContext;
beforeAll(async () => { ctx = await ticketContext(); });

it('a ticket created in a department deleted meanwhile gets "The selected department is invalid."', async () => {
  const department = await Department.create({ name: unique('Doomed') });
  await DepartmentBrand.create({ department_id: department.id, brand_id: ctx.brandId });
  const subject = unique('Raced');

  // The deletion holds its locks while the create checks the department (still committed to it)
  // and then waits at its insert, which the foreign key refuses once the deletion commits.
  const answer = await raceAfterHeld(
    async (t) => {
      await sequelize().query('DELETE FROM department_brands WHERE department_id = ?', { replacements: [department.id], transaction: t });
      await sequelize().query('DELETE FROM departments WHERE id = ?', { replacements: [department.id], transaction: t });
    },
    () => api.post('/api/ticket/ticket', {
      brand: ctx.brandId, department: department.id, status: ctx.openStatus, priority: ctx.priorityId, subject, text: 'x', user_email: newEmail('raced'),
    }).then((res) => res),
    `INSERT INTO \`tickets\`%${subject}`, 'the create to wait for the deletion',
  );
  expectError(answer, 422, 'The selected department is invalid.');
  expect(await Ticket.count({ where: { subject } })).toBe(0);
});
