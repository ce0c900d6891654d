// "Open a model file" as a button over a hidden file input: the Model tab and the banner that asks for a
// permalink's file both open a GGUF through the worker this way.
import { useRef } from 'react';
import { useServices } from '../appContext';
import { MODEL_FILE_ACCEPT } from '../modelController';

export function OpenModelButton(p: { label: string; testId: string; inputTestId: string }) {
  const { controller } = useServices();
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" className="primary" onClick={() => input.current?.click()} data-testid={p.testId}>
        {p.label}
      </button>
      <input
        ref={input}
        type="file"
        accept={MODEL_FILE_ACCEPT}
        className="hidden"
        data-testid={p.inputTestId}
        onChange={(e) => {
          const f = e.target.files?.[0];
          e.target.value = '';
          if (f) controller.models.open(f);
        }}
      />
    </>
  );
}
