import type { Model, ModelStatic } from 'sequelize';
import { VersionedValues } from './versionedCache';

/**
 * The definitions that writes consult on every call (a ticket's or a user's create reads the custom
 * fields of its kind, every event the enabled webhooks, a user's create the brands and the core
 * settings) and that lists run by (a custom field's options, a saved ticket filter and its
 * conditions), kept per process under the **definitions version** (db/versionedCache.ts), read
 * again after any change of them made through the models (src/wiring.ts names the models).
 */
export const definitions = new VersionedValues<unknown>('definitions-version');

/** The models whose changes make the kept definitions stale (src/wiring.ts). */
export const watchDefinitionTables = (models: Array<ModelStatic<Model>>) => definitions.version.watch(models);

export const bumpDefinitionsVersion = () => definitions.version.bump();
