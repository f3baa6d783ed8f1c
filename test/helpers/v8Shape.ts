import { setFlagsFromString } from 'node:v8';

// V8's own answer whether an object keeps a compact shape (fast properties) or has become a hash
// table: the natives syntax, allowed for the functions compiled from here on.
setFlagsFromString('--allow-natives-syntax');
export const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
/** Whether V8 holds a string as one flat run of characters, not as a rope of parts (a cons string). */
export const isFlatString = new Function('s', 'return %StringIsFlat(s)') as (s: string) => boolean;
