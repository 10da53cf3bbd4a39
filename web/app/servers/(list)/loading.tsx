// Shown while the page's queries run (kept off the server page, whose unknown id must answer 404).
export { Loading as default } from '../../../components/loading';
