// The console's HTML: a shell that loads its script and styles from this server; all it shows comes from the API.

/** No secret and nothing per user: the key is typed into the page and kept in the tab's sessionStorage. */
export const consolePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>toolgate console</title>
<link rel="icon" href="/console/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/app.css">
<script defer src="/console/app.js"></script>
</head>
<body>
<div id="app"><noscript>The toolgate console needs JavaScript.</noscript></div>
</body>
</html>
`;

export const consoleIcon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f4fb8"/><path d="M4 4h8v2H9v6H7V6H4z" fill="#fff"/></svg>`;
