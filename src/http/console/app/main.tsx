// The console's entry: renders the app into the page's #app element.
import { render } from 'preact';
import { App } from './app.tsx';

render(<App />, document.getElementById('app')!);
