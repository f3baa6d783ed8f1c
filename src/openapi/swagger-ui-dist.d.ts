/**
 * The part of swagger-ui-dist the docs page uses (the package ships no types). The package's main
 * module loads the whole browser bundle into Node; this file only tells where the files are.
 */
declare module 'swagger-ui-dist/absolute-path.js' {
  /** The folder of the package's static files (bundle, styles, icons). */
  const getAbsoluteFSPath: () => string;
  export default getAbsoluteFSPath;
}
