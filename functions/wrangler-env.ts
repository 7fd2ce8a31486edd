// What wrangler is run with, by `npm run build:worker` and `npm run start:worker` alike.

/** No metrics, no fetch of the `cf` object from Cloudflare, no banner. */
export const wranglerEnv = {
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
} as const;
