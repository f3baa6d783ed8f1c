// Runs before each test file (setupFilesAfterEnv), as the entry points do: the subscribers and
// cache watchers are registered. Reads no configuration, so files may still set their environment.
import { wire } from '../../src/wiring';

wire();
