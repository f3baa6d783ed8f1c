import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { fk, flag, id, str, tableOptions, text, timestamp, timestamps } from './columns';

export const name = '012_ecosystem';

const counter = () => ({ type: DataTypes.INTEGER.UNSIGNED, allowNull: false, defaultValue: 0 });
const httpStatus = () => ({ type: DataTypes.SMALLINT.UNSIGNED, allowNull: true });

/**
 * What integrators build on: the append-only event feed (`events`, its id is the cursor), webhook
 * subscriptions and their deliveries, the delivery record of every outgoing mail, and the stored
 * responses of requests sent with an Idempotency-Key.
 */
export async function up(q: QueryInterface): Promise<void> {
  // Written in the transaction of the change it reports; never updated or deleted by the API.
  await q.createTable('events', {
    id: id(), name: str(64, false), payload: text(false), created_at: timestamp(false),
  }, tableOptions);
  await q.addIndex('events', ['name', 'id'], { name: 'events_name_id' });

  await q.createTable('webhooks', {
    id: id(), url: str(2048, false), description: str(255),
    // JSON array of event names, or ["*"] for every event.
    events: text(false),
    // Encrypted at rest (crypto/secrets.ts, purpose `webhooks.secret`); shown once, on create.
    secret: str(512, false),
    enabled: flag(1), ...timestamps(),
  }, tableOptions);
  await q.addIndex('webhooks', ['enabled']);

  await q.createTable('webhook_deliveries', {
    id: id(), webhook_id: fk('webhooks'), event_id: fk('events'),
    // X-Helpdesk-Delivery: the same at every attempt and redelivery.
    uuid: { type: DataTypes.CHAR(36), allowNull: false, unique: true },
    event_name: str(64, false),
    // pending, succeeded, failed, skipped
    status: { ...str(16, false), defaultValue: 'pending' },
    attempts: counter(), response_code: httpStatus(), error: text(),
    last_attempt_at: timestamp(), delivered_at: timestamp(), ...timestamps(),
  }, tableOptions);
  await q.addIndex('webhook_deliveries', ['webhook_id', 'id']);
  await q.addIndex('webhook_deliveries', ['status']);
  await q.addIndex('webhook_deliveries', ['event_id']);

  // One per outbox entry of the mail queue, written by the mail worker (no row: still queued).
  await q.createTable('mail_deliveries', {
    id: id(), outbox_id: { ...fk('outbox'), unique: true },
    // queued (retrying), sent, failed, skipped
    status: { ...str(16, false), defaultValue: 'queued' },
    recipients: str(1024), subject: str(998), message_id: str(255), smtp_response: text(), error: text(),
    attempts: counter(), sent_at: timestamp(), failed_at: timestamp(), ...timestamps(),
  }, tableOptions);
  await q.addIndex('mail_deliveries', ['status']);

  // A POST with an Idempotency-Key: claimed in the transaction of its work, then its response.
  await q.createTable('idempotency_keys', {
    id: id(), token_id: fk('api_tokens'), key_hash: { type: DataTypes.CHAR(64), allowNull: false },
    fingerprint: { type: DataTypes.CHAR(64), allowNull: false }, path: str(2048, false),
    status_code: httpStatus(), response: text(), created_at: timestamp(false), completed_at: timestamp(),
  }, tableOptions);
  await q.addIndex('idempotency_keys', ['token_id', 'key_hash'], { unique: true, name: 'idempotency_keys_token_key' });
  await q.addIndex('idempotency_keys', ['created_at']);
}

export async function down(q: QueryInterface): Promise<void> {
  for (const table of ['idempotency_keys', 'mail_deliveries', 'webhook_deliveries', 'webhooks', 'events']) await q.dropTable(table);
}
