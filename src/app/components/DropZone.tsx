// Drop a .gguf (or .gguf.gz) anywhere on the page to open it: the worker reads its header, never the
// whole file.
import { useEffect, useState } from 'react';
import { useServices } from '../appContext';

const hasFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');

export function DropZone() {
  const { controller } = useServices();
  const [over, setOver] = useState(false);
  useEffect(() => {
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setOver(true);
    };
    const leave = (e: DragEvent) => {
      if (e.relatedTarget === null) setOver(false);
    };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setOver(false);
      const file = e.dataTransfer?.files[0];
      if (file) controller.models.open(file);
    };
    window.addEventListener('dragover', enter);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragover', enter);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, [controller]);
  if (!over) return null;
  return (
    <div className="dropzone" data-testid="dropzone">
      Drop a .gguf or .gguf.gz file to open it (only its header is read, and the tensors you run)
    </div>
  );
}
