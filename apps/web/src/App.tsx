import { ComparePage } from './pages/ComparePage';
import { ComposerPage } from './pages/composer/ComposerPage';
import { HistoryPage } from './pages/HistoryPage';
import { LiveRunPage } from './pages/LiveRunPage';
import { ReproductionPage } from './pages/ReproductionPage';
import { RunPage } from './pages/RunPage';
import { ScenariosPage } from './pages/ScenariosPage';
import { TrendsPage } from './pages/TrendsPage';
import { href, type Route, useRoute } from './router';

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'scenarios':
      return <ScenariosPage />;
    case 'history':
      return <HistoryPage />;
    case 'run':
      return <RunPage key={route.id} id={route.id} />;
    case 'compose':
      return <ComposerPage key={route.from ?? ''} from={route.from} />;
    case 'compare':
      return <ComparePage key={route.ids.join(',')} ids={route.ids} />;
    case 'reproduction':
      return <ReproductionPage key={route.folder} folder={route.folder} tag={route.tag} />;
    case 'live':
      return <LiveRunPage key={route.id} id={route.id} />;
    case 'trend':
      return (
        <TrendsPage
          key={`${route.scenario}/${route.target}/${route.sweepValue}`}
          scenario={route.scenario}
          target={route.target}
          sweepValue={route.sweepValue}
        />
      );
    default:
      return (
        <div className="empty">
          <h2>Nothing at {route.path}</h2>
          <p>
            Go to the <a href={href.scenarios}>scenarios</a> or the <a href={href.history}>history</a>.
          </p>
        </div>
      );
  }
}

export function App() {
  const route = useRoute();
  const section =
    route.page === 'scenarios' || route.page === 'reproduction'
      ? 'scenarios'
      : route.page === 'compose'
        ? 'compose'
        : route.page === 'not-found'
          ? ''
          : 'history';
  return (
    <>
      <header className="topbar">
        <a className="brand" href={href.scenarios}>
          kbench
        </a>
        <nav>
          <a
            href={href.scenarios}
            className={section === 'scenarios' ? 'active' : ''}
            data-testid="nav-scenarios"
          >
            Scenarios
          </a>
          <a
            href={href.compose()}
            className={section === 'compose' ? 'active' : ''}
            data-testid="nav-compose"
          >
            Composer
          </a>
          <a href={href.history} className={section === 'history' ? 'active' : ''} data-testid="nav-history">
            History
          </a>
        </nav>
      </header>
      <main className="content">
        <Page route={route} />
      </main>
    </>
  );
}
