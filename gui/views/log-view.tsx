export function LogView() {
  return <p class="todo">LogView: not built yet</p>;
}
