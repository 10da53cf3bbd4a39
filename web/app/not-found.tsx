import Link from 'next/link';

export default function NotFound() {
  return (
    <div className="panel">
      <h1>Not found</h1>
      <p>
        There is no such server or page. <Link href="/servers">All servers</Link>
      </p>
    </div>
  );
}
