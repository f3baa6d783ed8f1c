import express, { Router, type RequestHandler } from 'express';
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import { openApiDocument } from './document';

export const DOCS_PATH = '/docs';
export const OPENAPI_PATH = '/api/openapi.json';

/** The docs page loads its own scripts, styles and the document from this server, nothing else. */
export const DOCS_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
  "connect-src 'self'", "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Help desk API</title>
    <link rel="stylesheet" type="text/css" href="${DOCS_PATH}/swagger-ui.css" />
    <link rel="stylesheet" type="text/css" href="${DOCS_PATH}/index.css" />
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="${DOCS_PATH}/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="${DOCS_PATH}/initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout'
  });
};
`;

const docsHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', DOCS_CSP);
  next();
};

/**
 * `GET /api/openapi.json` (no token: the document holds no data) and `/docs`, Swagger UI served
 * from swagger-ui-dist by this server, so the page works without internet access.
 */
export function docsRouter(): Router {
  const router = Router();
  router.get(OPENAPI_PATH, (_req, res) => {
    res.json(openApiDocument());
  });
  router.use(DOCS_PATH, docsHeaders);
  router.get([DOCS_PATH, `${DOCS_PATH}/`], (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(PAGE);
  });
  router.get(`${DOCS_PATH}/initializer.js`, (_req, res) => {
    res.type('application/javascript').send(INITIALIZER);
  });
  // Its own initializer (the package's points at the petstore on the internet) is never served.
  router.get(`${DOCS_PATH}/swagger-initializer.js`, (_req, res) => { res.status(404).end(); });
  router.use(DOCS_PATH, express.static(getAbsoluteFSPath(), { index: false, maxAge: '1d' }));
  return router;
}
