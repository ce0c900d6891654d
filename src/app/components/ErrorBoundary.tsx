// Any render error shows a readable panel with a way back, never a blank page.
import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  children: ReactNode;
  /** Short name of what failed, e.g. "ownership view". */
  label?: string;
  /** Called by "reset": clear whatever state made the subtree throw. */
  onReset?: () => void;
}

interface State {
  error: Error | undefined;
}

/** Catches render errors of its subtree and shows them with a reset button. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: undefined };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error(`[mmq] ${this.props.label ?? 'app'} crashed:`, error, info.componentStack);
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div className="crash" role="alert">
        <h3>The {this.props.label ?? 'playground'} hit an error</h3>
        <pre>{error.message}</pre>
        <button
          type="button"
          onClick={() => {
            this.props.onReset?.();
            this.setState({ error: undefined });
          }}
        >
          Reset this panel
        </button>
      </div>
    );
  }
}
