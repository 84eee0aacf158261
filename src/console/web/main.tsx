// The page's entry point (bundled into app.js by tools/build-console.mjs): the header with the cluster's address
// and the navigation, and the view the hash route names.

import { render } from 'preact';
import { BrokersView } from './brokers.js';
import { ChartsView } from './charts.js';
import { href, useApi, useRoute } from './common.js';
import { GroupPage, GroupsView } from './groups.js';
import { SecurityView } from './security.js';
import { TopicPage, TopicsView } from './topics.js';

const SECTIONS = [
  ['brokers', 'Brokers'],
  ['topics', 'Topics'],
  ['groups', 'Consumer groups'],
  ['charts', 'Charts'],
  ['security', 'ACLs & quotas'],
] as const;

function View({ route }: { route: string[] }) {
  const [area = 'brokers', id, tab] = route;
  if (area === 'topics' && id !== undefined) return <TopicPage name={id} tab={tab ?? 'partitions'} />;
  if (area === 'topics') return <TopicsView />;
  if (area === 'groups' && id !== undefined) return <GroupPage groupId={id} />;
  if (area === 'groups') return <GroupsView />;
  if (area === 'charts') return <ChartsView />;
  if (area === 'security') return <SecurityView />;
  return <BrokersView />;
}

function App() {
  const route = useRoute();
  const info = useApi<{ bootstrapServers: string }>('/info');
  const area = route[0] ?? 'brokers';
  return (
    <>
      <header>
        <h1>Brook console</h1>
        <span class="meta">{info.data?.bootstrapServers ?? ''}</span>
        <nav>
          {SECTIONS.map(([path, label]) => (
            <a key={path} href={href(path)} class={area === path ? 'active' : ''}>
              {label}
            </a>
          ))}
        </nav>
      </header>
      <main>
        <View route={route} />
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
// The page's "Loading" line is replaced, not kept beside the app (render() adds to what a container holds).
root.replaceChildren();
render(<App />, root);
