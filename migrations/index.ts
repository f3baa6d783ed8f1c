import type { QueryInterface } from 'sequelize';
import * as m001 from './001_core';
import * as m002 from './002_user';
import * as m004 from './004_ticket_config';
import * as m005 from './005_ticket_setup';
import * as m010 from './010_selfservice';
import * as m003 from './003_uniqueness';
import * as m011 from './011_tickets';
import * as m013 from './013_notifications';
import * as m015 from './015_ticket_counter';
import * as m012 from './012_ecosystem';
import * as m016 from './016_mailbox';
import * as m017 from './017_outbox_job_options';
import * as m019 from './019_token_scopes';
import * as m019b from './019_ticket_status_names';
import * as m020 from './020_mail_catcher';
import * as m021export from './021_export';
import * as m021audit from './021_audit';
import * as m021bulk from './021_bulk_jobs';
import * as m018 from './018_ticket_list_indexes';
import * as m024sealed from './024_sealed_custom_field_values';
import * as m023files from './023_attachment_storage';
import * as m022oauth from './022_oauth';
import * as m018b from './018b_ticket_export_index';
import * as m025assigned from './025_ticket_list_assigned';
import * as m026days from './026_ticket_day_counts';
import * as m027dayStatus from './027_ticket_day_status_counts';
import * as m028dayFilters from './028_ticket_day_filter_counts';
import * as m029assignees from './029_ticket_assignee_counts';
import * as m030assigneeOrder from './030_ticket_assignee_list';
import * as m031assigneeOrders from './031_ticket_assignee_orders';
import * as m032customerIndex from './032_ticket_customer_index';
import * as m033replyAuthor from './033_reply_author_template';
import * as m034messageText from './034_message_text_block';
import * as m035userCounts from './035_ticket_user_counts';
import * as m036threadAudience from './036_mail_thread_audience';
import * as m037priorityNames from './037_ticket_priority_names';
import * as m038mailSender from './038_incoming_mail_sender';
import * as m039brandPassword from './039_brand_smtp_password';
import * as m040eventCreatedAt from './040_event_created_at';
import * as m041waitingReminders from './041_ticket_waiting_reminders';
import * as m042jobClaims from './042_job_claims';
import * as m043articleSearchText from './043_article_search_text';
import * as m044importKey from './044_incoming_mail_import_key';
import * as m045filterGroupsAll from './045_filter_groups_all';
import * as m046mailboxSettingsVersion from './046_mailbox_settings_version';
import * as m047firstPollUid from './047_mailbox_first_poll_uid';
import * as m048assigneeCountTriggers from './048_assignee_count_triggers';
import * as m049recount from './049_recount_ticket_lists';
import * as m050sweptUid from './050_mailbox_swept_uid';

export interface Migration {
  name: string;
  up(q: QueryInterface): Promise<void>;
  down(q: QueryInterface): Promise<void>;
}

/** Every migration, in the order it runs. A new migration is a new file, added at the end here. */
export const migrations: Migration[] = [m001, m002, m003, m004, m005, m010, m011, m012, m013, m015, m016, m017, m018, m019, m019b, m020, m021export, m021audit, m021bulk, m022oauth, m023files, m024sealed, m018b, m025assigned, m026days, m027dayStatus, m028dayFilters, m029assignees, m030assigneeOrder, m031assigneeOrders, m032customerIndex, m033replyAuthor, m034messageText, m035userCounts, m036threadAudience, m037priorityNames, m038mailSender, m039brandPassword, m040eventCreatedAt, m041waitingReminders, m042jobClaims, m043articleSearchText, m044importKey, m045filterGroupsAll, m046mailboxSettingsVersion, m047firstPollUid, m048assigneeCountTriggers, m049recount, m050sweptUid];
