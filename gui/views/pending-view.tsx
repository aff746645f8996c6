export function PendingNotices() {
  return <p class="todo">PendingNotices: not built yet</p>;
}
