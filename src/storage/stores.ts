import { resolve } from 'node:path';
import { config } from '../config';
import { StoreUnavailableError, type BlobStore, type StoreName } from './blobStore';
import { DatabaseStore } from './databaseStore';
import { DirectoryStore } from './directoryStore';

const database = new DatabaseStore();
let directory: DirectoryStore | undefined;

/** The store of this name: where an upload row's `storage` says its bytes are. */
export function storeNamed(name: string): BlobStore {
  if (name === 'database') return database;
  if (name === 'directory') return directoryStore();
  throw new StoreUnavailableError(`Unknown attachment store "${name}".`);
}

/** The directory store at ATTACHMENTS_DIR; throws when it is not set. */
export function directoryStore(): DirectoryStore {
  const dir = config().attachmentStorage.dir;
  if (!dir) throw new StoreUnavailableError('ATTACHMENTS_DIR is not set, yet an upload is stored in the directory store.');
  if (!directory || directory.root !== resolve(dir)) directory = new DirectoryStore(dir);
  return directory;
}

/** Where new uploads go (ATTACHMENTS_STORAGE). */
export const writeStoreName = (): StoreName => config().attachmentStorage.store;
