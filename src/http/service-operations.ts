// The service routes as the OpenAPI document lists them: health, the document itself, the docs page and the web console.
import type { Operation } from './openapi-types.ts';

export function serviceOperations(): Operation[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      tag: 'service',
      operationId: 'health',
      summary: 'Health: 200 once the server takes tool calls',
      public: true,
      answers: { 200: { description: 'Ready.', schema: 'Health' } },
      errors: [],
    },
    {
      method: 'get',
      path: '/openapi.json',
      tag: 'service',
      operationId: 'openApi',
      summary: 'This document',
      public: true,
      answers: { 200: { description: 'The OpenAPI 3.1 document.', schema: { type: 'object' } } },
      errors: [],
    },
    {
      method: 'get',
      path: '/docs',
      tag: 'service',
      operationId: 'docs',
      summary: 'The interactive docs page',
      public: true,
      answers: { 200: { description: 'An HTML page.', contentType: 'text/html' } },
      errors: [],
    },
    ...consoleOperations(),
  ];
}

/** The web console's page and assets: public, the same for everyone; it signs in with a key it then sends to /v1. */
function consoleOperations(): Operation[] {
  const asset = (path: string, operationId: string, summary: string, contentType: string): Operation => ({
    method: 'get',
    path,
    tag: 'service',
    operationId,
    summary,
    public: true,
    answers: { 200: { description: summary, contentType } },
    errors: [],
  });
  return [
    asset(
      '/console',
      'console',
      'The web console: sign in with a key to decide approvals, follow processes, browse files and see usage',
      'text/html',
    ),
    asset('/console/app.js', 'consoleScript', "The console's script", 'text/javascript'),
    asset('/console/app.css', 'consoleStyle', "The console's styles", 'text/css'),
    asset('/console/icon.svg', 'consoleIcon', "The console's icon", 'image/svg+xml'),
  ];
}
