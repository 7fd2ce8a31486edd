// The archive routes as the OpenAPI document lists them, their queries taken from the contract.
import { archiveDownloadQuery, archiveUploadQuery } from '../contract/http-requests.ts';
import { queryParameters, type Operation } from './openapi-types.ts';

const binary = { type: 'string', format: 'binary' };

export function archiveOperations(): Operation[] {
  return [
    {
      method: 'get',
      path: '/v1/workspaces/{ws}/archive',
      tag: 'workspaces',
      operationId: 'downloadArchive',
      summary: 'Download a directory as a tar (or gzip’d tar)',
      description:
        'Streams the files below prefix in path order, named relative to it: directories (empty ones too) as directory ' +
        'entries, symlinks as links, files with their bytes. The workspace keeps no modes: files are 0644, directories ' +
        '0755; every entry has the time of the download. Content-Disposition names the file.',
      query: queryParameters(archiveDownloadQuery),
      answers: {
        200: {
          description: 'The tar (application/x-tar), or with format=tgz the tar gzip’d (application/gzip).',
          contentType: 'application/x-tar',
          schema: binary,
        },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'path_outside_workspace', 'symlink_loop'],
    },
    {
      method: 'put',
      path: '/v1/workspaces/{ws}/archive',
      tag: 'workspaces',
      operationId: 'uploadArchive',
      summary: 'Apply a tar (or gzip’d tar) in one commit, every entry through the path guard',
      description:
        'gzip is told by its magic bytes, whatever the Content-Type. Each entry is joined under prefix and checked as a ' +
        'write_file path; a refused entry refuses the whole archive (details.entry names it) and nothing changes. Symlinks ' +
        'stay links (one leading outside the workspace is refused); a hard link to an earlier file becomes a copy; ' +
        'devices and fifos are skipped and listed. The body and the tar it unpacks to each count against the body ' +
        'limit, each file against the file limit. Needs a key that may call write_file and apply_patch without approval.',
      query: queryParameters(archiveUploadQuery),
      body: { content: { 'application/x-tar': binary, 'application/gzip': binary }, required: true },
      answers: { 200: { description: 'Applied: what the archive held.', schema: 'ArchiveApplied' } },
      errors: [
        'invalid_argument',
        'forbidden',
        'not_found',
        'path_outside_workspace',
        'path_denied',
        'symlink_loop',
        'conflict',
        'payload_too_large',
      ],
    },
  ];
}
