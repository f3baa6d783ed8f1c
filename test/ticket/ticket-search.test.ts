/**
 * The ticket search on the default engine (InnoDB FULLTEXT): the cases of ./searchCases.ts.
 */
import { searchCases } from './searchCases';

searchCases();
