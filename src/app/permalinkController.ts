// Permalinks and the tab's stored buffers: the URL hash follows the state (debounced, without a history
// entry), a link opened (at start or pasted) is shown for the visitor to accept or decline unless it is
// the hash this tab wrote last, and the editor buffers and the stash are stored as they change -- except
// what a link brings, which is stored only once the visitor accepts it.
import { loadBuffers, loadStash, saveBuffer, saveStash, type BufferStorage } from './editor/bufferStorage';
import { decodePermalink, encodePermalink } from './permalink/codec';
import {
  acceptLink,
  act,
  applyPermalink,
  declineLink,
  getApp,
  linkFailed,
  permalinkOf,
  previewPermalink,
  restoreBuffers,
  type AppState,
} from './store';

export interface PermalinkController {
  /** At start: the stored buffers, then the URL's hash (a failure keeps the default config). */
  restore(): void;
  /** The permalink of the current state (absolute URL). */
  link(base: string): string;
  /**
   * Open a permalink hash (hashchange: a link pasted into the address bar). Pass the event's new hash:
   * a debounced hash write may already have replaced `location.hash` before the event is handled.
   */
  openHash(hash?: string): void;
  /** Run the link being shown ("Run this linked kernel"): from now on it is the visitor's, and stored. */
  acceptLink(): void;
  /** Keep one's own config and kernel instead of the link being shown. */
  declineLink(): void;
  /** The state changed: store the buffers that changed, and write the hash after the debounce. */
  follow(s: AppState, prev: AppState): void;
}

/** Where the session storage keeps the hash this tab wrote last. */
const OWN_HASH_KEY = 'mmq.ownHash';

/**
 * The permalink controller; `runNow` runs an accepted link.
 * @example const links = createPermalinkController({ storage, getHash, replaceHash, hashDelay: 250, runNow }); links.restore();
 */
export function createPermalinkController(env: {
  storage: BufferStorage;
  /** The tab's session storage: the hash this tab wrote last (reloading one's own state asks nothing). */
  session?: Pick<Storage, 'getItem' | 'setItem'>;
  getHash(): string;
  replaceHash(hash: string): void;
  hashDelay: number;
  runNow(): void;
}): PermalinkController {
  let hashTimer: ReturnType<typeof setTimeout> | undefined;
  let lastWrittenHash = '';

  const writeHash = () => {
    if (getApp().pendingLink) return; // the address bar keeps the link until it is accepted or declined
    const hash = encodePermalink(permalinkOf(getApp()));
    env.session?.setItem(OWN_HASH_KEY, hash);
    if (hash !== env.getHash()) {
      lastWrittenHash = hash;
      env.replaceHash(hash);
    }
  };

  const openHash = (hash = env.getHash(), atStart = false) => {
    // A pending write of the old state's hash must not clobber the link being opened.
    clearTimeout(hashTimer);
    if (!hash || hash === '#' || hash === lastWrittenHash) return;
    const r = decodePermalink(hash, getApp().catalogs);
    if (r.ok) act(hash === env.session?.getItem(OWN_HASH_KEY) ? applyPermalink : previewPermalink, r.state);
    else
      act(
        linkFailed,
        `${r.error} ${atStart ? 'Showing the default config instead.' : 'The config you had is kept.'}`,
      );
  };

  return {
    restore() {
      const ids = getApp().catalogs.map((c) => c.id);
      act(restoreBuffers, loadBuffers(env.storage, ids), loadStash(env.storage, ids));
      openHash(env.getHash(), true);
    },
    link(base) {
      return base.replace(/#.*$/, '') + encodePermalink(permalinkOf(getApp()));
    },
    openHash: (hash) => openHash(hash, false),
    acceptLink() {
      if (!getApp().pendingLink) return;
      act(acceptLink);
      const s = getApp();
      saveBuffer(env.storage, s.config.kernel, s.buffers[s.config.kernel]);
      saveStash(env.storage, s.stash);
      writeHash();
      env.runNow();
    },
    declineLink() {
      act(declineLink);
    },
    follow(s, prev) {
      const id = s.config.kernel;
      // Nothing a link brings is stored before the visitor accepts it.
      if (!s.pendingLink && s.buffers[id] !== prev.buffers[id]) saveBuffer(env.storage, id, s.buffers[id]);
      if (!s.pendingLink && s.stash !== prev.stash) saveStash(env.storage, s.stash);
      if (
        s.config !== prev.config ||
        s.tab !== prev.tab ||
        s.buffers !== prev.buffers ||
        s.generated !== prev.generated ||
        s.ab !== prev.ab
      ) {
        clearTimeout(hashTimer);
        hashTimer = setTimeout(writeHash, env.hashDelay);
      }
    },
  };
}
